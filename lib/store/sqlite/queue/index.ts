import type { Database } from "bun:sqlite";
import type {
  AttemptRecord,
  ChangeEvent,
  Claim,
  DeliveryFilter,
  Outcome,
} from "../../../webhooks/model.ts";
import type { DeliveryQueue } from "../../../webhooks/ports.ts";
import { purgeInBatches } from "../../../webhooks/purge.ts";
import type { ChangeListener } from "../changes.ts";
import { createClaim } from "./claim.ts";
import { dueSummary, nextDueAt } from "./due.ts";
import { createEnqueue } from "./enqueue.ts";
import { createFinish } from "./finish.ts";
import { attemptsAfter, createListing, lastAttemptId } from "./listing.ts";
import { createMaintenance, purgeBatch } from "./maintenance.ts";
import { createRenew } from "./renew.ts";

export { CLAIM_SQL } from "./claim.ts";
export { LIST_SQL } from "./listing.ts";

export interface FinishItem {
  claim: Claim;
  record: AttemptRecord;
  outcome: Outcome;
}

export type ClaimOptions = Parameters<DeliveryQueue["claim"]>[0];

/**
 * The queue plus synchronous batch operations, so the store can group the writes of one turn
 * of the event loop (results and the claims that refill the freed slots) into one transaction.
 */
export interface SqliteQueue extends DeliveryQueue {
  /** Claims and finishes in one transaction, each in a savepoint: per request, its result or error. */
  writeBatch(
    finishes: FinishItem[],
    claims: ClaimOptions[],
  ): { finished: Array<boolean | Error>; claimed: Array<Claim[] | Error> };
}

function attempt<T>(fn: () => T): T | Error {
  try {
    return fn();
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * The delivery queue on SQLite. Every write is one `BEGIN IMMEDIATE` transaction (a savepoint
 * when the caller already opened one, so enqueue joins the caller's transaction).
 */
export function createSqliteQueue(
  db: Database,
  options: { now?: () => number; changes?: Pick<ChangeListener, "markSeen" | "notifyLocal"> } = {},
): SqliteQueue {
  const now = options.now ?? Date.now;
  const changes = options.changes ?? { markSeen() {}, notifyLocal() {} };
  const enqueueTx = createEnqueue(db, now);
  const enqueueManyTx = db.transaction(
    (changes: readonly ChangeEvent[], webhookId: number | undefined): number[] =>
      changes.flatMap((change) => enqueueTx(change, webhookId)),
  );
  const { claimRows, claimable } = createClaim(db, changes);
  const { finishRow, finishRows, releaseRows } = createFinish(db);
  const renewTx = db.transaction(createRenew(db));
  const listing = createListing(db);
  const maintenance = createMaintenance(db);

  const claimTx = db.transaction(claimRows);
  const finishTx = db.transaction(finishRow);
  const releaseTx = db.transaction(releaseRows);

  // Group commit: a commit costs far more than the statements in it, so the results and claims
  // of one turn share a transaction. Results first: the claims then see what they free. If any
  // statement fails, the batch is rolled back and redone with a savepoint per request, so one
  // failure undoes only itself.
  const writeBatchFastTx = db.transaction((finishes: FinishItem[], claims: ClaimOptions[]) => {
    const at = now();
    return {
      finished: finishRows(finishes, at) as Array<boolean | Error>,
      claimed: claims.map((c): Claim[] | Error => (c.limit > 0 ? claimRows(c) : [])),
    };
  });
  const writeBatchTx = db.transaction((finishes: FinishItem[], claims: ClaimOptions[]) => {
    const at = now();
    const finished = finishes.map((item) =>
      attempt(() => finishTx(item.claim, item.record, item.outcome, at)),
    );
    const claimed = claims.map((c) => attempt(() => (c.limit > 0 ? claimTx(c) : [])));
    return { finished, claimed };
  });

  function notifyIf(changed: number): number {
    if (changed > 0) changes.notifyLocal();
    return changed;
  }

  return {
    async enqueue(change, enqueueOptions = {}) {
      const ids = enqueueTx.immediate(change, enqueueOptions.webhookId);
      if (ids.length > 0) changes.notifyLocal();
      return ids;
    },

    async enqueueMany(batch, enqueueOptions = {}) {
      const ids = enqueueManyTx.immediate(batch, enqueueOptions.webhookId);
      notifyIf(ids.length);
      return ids;
    },

    async claim(claimOptions) {
      if (claimOptions.limit <= 0) return [];
      return claimTx.immediate(claimOptions);
    },

    async renew(claims, { leaseMs, now: at }) {
      if (claims.length === 0) return [];
      const result = renewTx.immediate(claims, leaseMs, at);
      notifyIf(result.released);
      return result.claims;
    },

    async finish(claim, record, outcome) {
      const applied = finishTx.immediate(claim, record, outcome, now());
      if (applied && outcome.state === "queued") changes.notifyLocal();
      return applied;
    },

    writeBatch(finishes, claims) {
      // Claims alone and nothing due (a commit elsewhere woke an idle worker): two index probes
      // instead of taking the write lock, which every other writer would have to wait for.
      if (finishes.length === 0 && !claims.some((c) => c.limit > 0 && claimable(c.now))) {
        return { finished: [], claimed: claims.map(() => []) };
      }
      let result: ReturnType<typeof writeBatchTx>;
      try {
        result = writeBatchFastTx.immediate(finishes, claims);
      } catch {
        result = writeBatchTx.immediate(finishes, claims);
      }
      const requeued = result.finished.some(
        (applied, i) => applied === true && finishes[i]?.outcome.state === "queued",
      );
      if (requeued) changes.notifyLocal();
      return result;
    },

    async release(claims) {
      if (claims.length === 0) return;
      notifyIf(releaseTx.immediate(claims, now()));
    },

    async nextDueAt() {
      return nextDueAt(db);
    },

    async list(filter: DeliveryFilter = {}) {
      return listing.list(filter);
    },

    async get(id) {
      return listing.get(id);
    },

    async retry(ids, at) {
      if (ids.length === 0) return 0;
      return notifyIf(maintenance.retry(ids, at));
    },

    async retryAllFailed(at) {
      return notifyIf(maintenance.retryAllFailed(at));
    },

    async stats() {
      return listing.stats();
    },

    async purgeBatch(olderThan, batchSize) {
      return purgeBatch(db, olderThan, batchSize);
    },

    async dueSummary(at) {
      return dueSummary(db, at);
    },

    async lastAttemptId() {
      return lastAttemptId(db);
    },

    async attemptsAfter(afterId, limit) {
      return attemptsAfter(db, afterId, limit);
    },

    async purge(olderThan, purgeOptions = {}) {
      const limit = purgeOptions.batchSize ?? 1000;
      return purgeInBatches((before, n) => purgeBatch(db, before, n), olderThan, limit);
    },
  };
}
