import type { Database } from "bun:sqlite";
import { purgeInBatches } from "../../../webhooks/delivery/purge.ts";
import type { DeliveryFilter } from "../../../webhooks/model.ts";
import type { DeliveryQueue, FinishItem } from "../../../webhooks/ports.ts";
import { createPlanHint } from "../../../webhooks/rendering/change-plan.ts";
import {
  type RenderTemplates,
  sharedTemplateRenderer,
} from "../../../webhooks/rendering/render-process.ts";
import type { ChangeListener } from "../changes.ts";
import {
  type AvailabilityWatch,
  clockUnderLock,
  createAvailabilityWatch,
  isUnavailable,
  STALL_MS,
} from "./availability.ts";
import { createClaim } from "./claim.ts";
import { dueSummary, nextDueAt } from "./due.ts";
import { createEnqueue } from "./enqueue.ts";
import { createFinish } from "./finish.ts";
import { createKeepRendered } from "./keep-rendered.ts";
import { attemptsAfter, createListing, lastAttemptId } from "./listing.ts";
import { createMaintenance, purgeBatch } from "./maintenance.ts";
import { createRenew } from "./renew.ts";
import { createRerender } from "./rerender.ts";
import { createSearch } from "./search.ts";
import { createAttemptSummaries, createWebhookStats } from "./webhook-stats.ts";

export { CLAIM_SQL } from "./claim.ts";
export { LIST_SQL } from "./listing.ts";

type ClaimOptions = Parameters<DeliveryQueue["claim"]>[0];

/** Turns a thrown value into the Error a batch reports for one item. */
function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * The delivery queue on SQLite. Every write is one `BEGIN IMMEDIATE` transaction (a savepoint
 * when the caller already opened one, so enqueue joins the caller's transaction).
 */
export function createSqliteQueue(
  db: Database,
  options: {
    now?: () => number;
    changes?: Pick<ChangeListener, "markSeen" | "notifyLocal">;
    render?: RenderTemplates;
    /**
     * Runs a read or a write that must not join another caller's open transaction (the store's
     * turn on the connection): planning reads the webhooks through it, then renders outside it;
     * a retry reads its template failures and writes them back through it, rendering between.
     */
    read?: <T>(fn: () => T) => Promise<T>;
    /**
     * What this process saw of the database's availability, shared with its other writes (the
     * worker's heartbeat): an idle worker's stalled heartbeat is an outage its claims must note.
     */
    availability?: AvailabilityWatch;
  } = {},
): DeliveryQueue {
  const now = options.now ?? Date.now;
  const changes = options.changes ?? { markSeen() {}, notifyLocal() {} };
  const hint = createPlanHint();
  const { enqueue, plan } = createEnqueue(db, now, { render: options.render, hint });
  const read = options.read ?? (async <T>(fn: () => T) => fn());
  const listing = createListing(db);
  const maintenance = createMaintenance(db);
  const rerender = createRerender(db, options.render ?? sharedTemplateRenderer().render, read);
  const searching = createSearch(db);
  const tally = createWebhookStats(db);
  const summaries = createAttemptSummaries(db);
  const availability = options.availability ?? createAvailabilityWatch();
  const claiming = createClaiming(db, { now, changes, availability, clock: options.now });

  function notifyIf(changed: number): number {
    if (changed > 0) changes.notifyLocal();
    return changed;
  }

  return {
    ...claiming,
    keepRendered: createKeepRendered(db, availability),

    async enqueue(change, enqueueOptions = {}) {
      const ids = await enqueue([change], enqueueOptions.webhookId, enqueueOptions.plan);
      if (ids.length > 0) changes.notifyLocal();
      return ids;
    },

    async plan(change, planOptions = {}) {
      return plan(change, planOptions.webhookId, read);
    },

    async worthPlanning() {
      return hint.offThread;
    },

    async enqueueMany(batch, enqueueOptions = {}) {
      const ids = await enqueue(batch, enqueueOptions.webhookId);
      notifyIf(ids.length);
      return ids;
    },

    async nextDueAt() {
      return nextDueAt(db, now());
    },

    async list(filter: DeliveryFilter = {}) {
      return listing.list(filter);
    },

    async get(id) {
      return listing.get(id);
    },

    async retry(ids, at) {
      if (ids.length === 0) return 0;
      // A delivery failed by its template is rendered again first (its template may be fixed).
      const rendered = new Set(await rerender.byIds(ids, at));
      const others = ids.filter((id) => !rendered.has(id));
      return notifyIf(rendered.size + (await read(() => maintenance.retry(others, at))));
    },

    async search(filter, page) {
      return searching.search(filter, page);
    },

    async matchingIds(filter, limit, after) {
      return searching.matchingIds(filter, limit, after);
    },

    async idStates(ids) {
      return searching.idStates(ids);
    },

    async replay(ids, at) {
      if (ids.length === 0) return 0;
      return notifyIf(maintenance.replay(ids, at));
    },

    async stats() {
      return listing.stats();
    },

    async retryingCount() {
      return listing.retryingCount();
    },

    async attemptTally(webhookId, at) {
      return tally(webhookId, at);
    },

    async attemptSummaries(webhookIds, at) {
      return summaries(webhookIds, at);
    },

    async purgeBatch(olderThan, batchSize) {
      return availability.write(() => purgeBatch(db, olderThan, batchSize));
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
      const batch = (before: number, n: number) =>
        availability.write(() => purgeBatch(db, before, n));
      return purgeInBatches(batch, olderThan, limit);
    },
  };
}

/**
 * The worker's side of the queue: claims (their time read under the lock), renewals, results
 * and releases, each a write through the availability watch, results in batches.
 */
function createClaiming(
  db: Database,
  deps: {
    now: () => number;
    changes: Pick<ChangeListener, "markSeen" | "notifyLocal">;
    availability: AvailabilityWatch;
    /** The store's clock as given (absent: the wall clock, read under the lock). */
    clock?: () => number;
  },
): Pick<DeliveryQueue, "claim" | "renew" | "finish" | "finishMany" | "release"> {
  const { now, changes, availability } = deps;
  const { claimRows, claimable } = createClaim(db, changes);
  const { finishRows, releaseRows } = createFinish(db);
  const renewTx = db.transaction(createRenew(db));
  const underLock = clockUnderLock(deps.clock);

  // The claim's time is read under the lock: one that waited through an outage judges leases,
  // and notes the outage's end, with the time it got the lock. Waiting longer than STALL_MS in
  // all (for the lock, or for its turn behind a stalled write) counts as having seen an outage.
  const claimTx = db.transaction((options: ClaimOptions, started: number) => {
    const at = underLock(options.now);
    const returned = availability.returned(started) || at - options.now > STALL_MS;
    const claims = claimRows({ ...options, now: at }, returned);
    return { claims, returned };
  });
  const finishTx = db.transaction((items: readonly FinishItem[]) => finishRows(items, now()));
  const releaseTx = db.transaction(releaseRows);
  // When a batch fails (a result no longer fits, say), each result is tried again in a
  // savepoint of its own, so one failure undoes only itself.
  const finishEachTx = db.transaction((items: readonly FinishItem[]) => {
    const at = now();
    return items.map((item): boolean | Error => {
      try {
        return db.transaction(() => finishRows([item], at))()[0] ?? false;
      } catch (error) {
        return asError(error);
      }
    });
  });

  function finishMany(items: readonly FinishItem[]): Array<boolean | Error> {
    if (items.length === 0) return [];
    let applied: Array<boolean | Error>;
    try {
      applied = availability.write(() => finishTx.immediate(items));
    } catch (error) {
      if (isUnavailable(error)) throw error;
      applied = availability.write(() => finishEachTx.immediate(items));
    }
    if (applied.some((ok, i) => ok === true && items[i]?.outcome.state === "queued")) {
      changes.notifyLocal();
    }
    return applied;
  }

  function notifyIf(changed: number): number {
    if (changed > 0) changes.notifyLocal();
    return changed;
  }

  return {
    async claim(claimOptions) {
      if (claimOptions.limit <= 0) return [];
      // Nothing due (a commit elsewhere woke an idle worker): two index probes instead of taking
      // the write lock, which every other writer would have to wait for.
      if (!claimable(claimOptions.now, claimOptions.leaseMs)) return [];
      const { claims, returned } = availability.write((started) =>
        claimTx.immediate(claimOptions, started),
      );
      if (returned) availability.noted();
      return claims;
    },

    async renew(claims, { leaseMs, now: at }) {
      if (claims.length === 0) return [];
      const result = availability.write(() => renewTx.immediate(claims, leaseMs, at));
      notifyIf(result.released);
      return result.claims;
    },

    async finish(claim, record, outcome) {
      const [applied] = finishMany([{ claim, record, outcome }]);
      if (applied instanceof Error) throw applied;
      return applied ?? false;
    },

    async finishMany(items) {
      return finishMany(items);
    },

    async release(claims) {
      if (claims.length === 0) return;
      notifyIf(availability.write(() => releaseTx.immediate(claims, now())));
    },
  };
}
