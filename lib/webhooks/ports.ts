import type { ItemRepo } from "../inventory/model.ts";
import type {
  Attempt,
  AttemptRecord,
  AttemptSample,
  ChangeEvent,
  ChangePlan,
  Claim,
  Delivery,
  DeliveryFilter,
  DeliverySearch,
  DeliveryState,
  DueSummary,
  NewWebhook,
  OperationalEvent,
  Outcome,
  RenderedDelivery,
  Streak,
  Webhook,
  WebhookPatch,
  WorkerInfo,
} from "./model.ts";
import type { AttemptSummary, AttemptTally } from "./observe/webhook-stats.ts";

/**
 * The storage interfaces (ports) of webhook delivery. The SQLite and PostgreSQL adapters in
 * lib/store implement them, and one contract suite (tests/store/contract.ts) proves both.
 */

export interface WebhookRepo {
  create(input: NewWebhook): Promise<Webhook>;
  update(id: number, patch: WebhookPatch): Promise<Webhook>;
  get(id: number): Promise<Webhook | null>;
  getByName(name: string): Promise<Webhook | null>;
  list(): Promise<Webhook[]>;
  remove(id: number): Promise<boolean>;
}

/** One result to record: the claim it fences, the attempt, and what the delivery becomes. */
export interface FinishItem {
  claim: Claim;
  record: AttemptRecord;
  outcome: Outcome;
}

/** A delivery named by id, as a retry or replay by ids judges it (delivery/by-ids.ts). */
export interface IdState {
  id: number;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: number;
  templateFailed: boolean;
}

export interface DeliveryQueue {
  /**
   * Fans out to every enabled webhook subscribed to the event; returns the new delivery ids.
   * With a `plan` of this change (from `plan`), only webhooks created or edited since it was
   * made are rendered here; without one (or one made for another change), all of them are.
   */
  enqueue(
    change: ChangeEvent,
    options?: { webhookId?: number; plan?: ChangePlan },
  ): Promise<number[]>;
  /**
   * Renders a change's templates and evaluates its conditions without writing anything, for
   * `enqueue` to insert later: called before the change's write transaction, so the renders
   * hold no lock nor connection meanwhile.
   */
  plan(change: ChangeEvent, options?: { webhookId?: number }): Promise<ChangePlan>;
  /**
   * Whether `plan` is worth calling for a change: some enabled webhook, as last read, has a
   * template or a regex condition (a hint, read from memory: see PlanHint).
   */
  worthPlanning(): Promise<boolean>;
  /** Many changes at once (bulk emits): as many enqueues, in as few statements as it can. */
  enqueueMany(changes: readonly ChangeEvent[], options?: { webhookId?: number }): Promise<number[]>;
  /**
   * Leases up to `limit` due deliveries of sendable webhooks, expired leases included. An
   * expired lease at its cap is not taken over: the delivery fails, its lost attempt recorded.
   * The cap is policy/retry-schedule.ts's attemptLimit: the webhook's schedule's attempts cut
   * by `maxAttempts` (WEBHOOK_MAX_ATTEMPTS; default none), `short`'s being `maxAttempts` or 5.
   */
  claim(options: {
    workerId: string;
    limit: number;
    leaseMs: number;
    now: number;
    maxAttempts?: number;
    /**
     * Deliveries the claiming worker still holds (a claim in its buffer, a request in flight, a
     * result not yet written): their leases, if run out, are not taken over by its own claim,
     * which would hold the delivery twice and could send it again.
     */
    holding?: ReadonlySet<number>;
  }): Promise<Claim[]>;
  /**
   * Before held claims are sent: extends each lease still held to `now + leaseMs` and re-reads
   * its webhook. Per claim, in order: the claim with its new lease and current webhook, or null
   * when it must not be sent: no longer ours (taken over or finished), its lease already run
   * out, or its webhook disabled (the last two are given back unattempted; a deleted webhook's
   * deliveries are gone).
   */
  renew(claims: Claim[], options: { leaseMs: number; now: number }): Promise<Array<Claim | null>>;
  /**
   * Records the attempt and applies the outcome, fenced by the claim (still leased to its worker
   * under its generation): false when the claim no longer stands (result discarded).
   */
  finish(claim: Claim, record: AttemptRecord, outcome: Outcome): Promise<boolean>;
  /**
   * `finish` for many results (of different deliveries) in one transaction: per item, whether
   * it applied, or the error that kept it from being written. Rejects when nothing could be
   * written (the database unavailable). A worker batches its results through this
   * (lib/async/batch.ts at the binding).
   */
  finishMany(items: readonly FinishItem[]): Promise<Array<boolean | Error>>;
  /** Gives claims back unattempted (shutdown): queued again, attempt number not consumed. */
  release(claims: Claim[]): Promise<void>;
  /**
   * Keeps what the worker rendered for a claim whose delivery was left to render
   * (renderPending), so every attempt sends the same bytes; fenced by the claim. False: the
   * claim no longer holds it (nothing written, nothing to send).
   */
  keepRendered(claim: Claim, rendered: RenderedDelivery): Promise<boolean>;
  /** Earliest time something becomes due (queued or lease expiry), or null when nothing waits. */
  nextDueAt(): Promise<number | null>;
  list(filter?: DeliveryFilter): Promise<Delivery[]>;
  get(id: number): Promise<{ delivery: Delivery; attempts: Attempt[] } | null>;
  /**
   * failed → queued now, history kept; one waiting for an automatic retry (queued after an
   * attempt) is made due now; returns how many changed. A delivery whose template failed at
   * enqueue stays failed: it has no body to send.
   */
  retry(ids: number[], now: number): Promise<number>;
  /**
   * The deliveries `filter` matches, newest first, a page of them, and how many match (all of
   * them, whatever the page). A page is `offset` rows in, or, with `beforeId` (keyset paging:
   * the last id of the page before), those below that id: no row twice or missed while others
   * insert and delete, since ids only grow and are never reused.
   */
  search(
    filter: DeliverySearch,
    page: { limit: number; offset: number; beforeId?: number },
  ): Promise<{ deliveries: Delivery[]; total: number }>;
  /**
   * The ids of deliveries `filter` matches, oldest first, at most `limit`; only those after
   * the id `after` when given (the next page of a bulk retry or replay).
   */
  matchingIds(filter: DeliverySearch, limit: number, after?: number): Promise<number[]>;
  /** The state of each delivery `ids` names that exists (delivery/by-ids.ts judges them). */
  idStates(ids: readonly number[]): Promise<IdState[]>;
  /**
   * successful or failed → queued now: the same message (id, body, URL) sent again as the next
   * attempt, history kept; returns how many changed. Queued and delivering ones are already on
   * their way, and one whose template failed has nothing to send: those are left as they are.
   */
  replay(ids: number[], now: number): Promise<number>;
  stats(): Promise<Record<DeliveryState, number>>;
  /**
   * Queued deliveries waiting for an automatic retry (after an attempt that was not 2XX): with
   * the failed ones, the rows of the admin's Failed list and the CLI's `--state failed`.
   */
  retryingCount(): Promise<number>;
  /**
   * A webhook's attempts at `now` (its health: observe/webhook-stats.ts), from one snapshot,
   * through the attempts index by (webhook, outcome, time): cost grows with the webhook's own
   * attempts in the window, never with the table.
   */
  attemptTally(webhookId: number, now: number): Promise<AttemptTally>;
  /**
   * What a list shows of each of `webhookIds` at `now`: the day's attempts and successes, the
   * last success, whether failing; index ranges of the day and seeks, never the week.
   */
  attemptSummaries(
    webhookIds: readonly number[],
    now: number,
  ): Promise<Map<number, AttemptSummary>>;
  /** Deletes terminal deliveries (and their attempts) completed before `olderThan`, in batches. */
  purge(olderThan: number, options?: { batchSize?: number }): Promise<number>;
  /**
   * One batch of `purge`: at most `batchSize` deliveries, in one short transaction. Retention
   * calls it in a loop, yielding in between, so workers are never held up.
   */
  purgeBatch(olderThan: number, batchSize: number): Promise<number>;
  /** Queued deliveries of enabled webhooks due at `now`, expired leases included (metrics). */
  dueSummary(now: number): Promise<DueSummary>;
  /** The newest attempt id, 0 when there is none (where /metrics starts counting). */
  lastAttemptId(): Promise<number>;
  /** Attempts recorded after `afterId`, oldest first, at most `limit`. */
  attemptsAfter(afterId: number, limit: number): Promise<AttemptSample[]>;
}

/** Worker heartbeats, so people can see which workers run. */
export interface WorkerRegistry {
  heartbeat(info: WorkerInfo): Promise<void>;
  remove(id: string): Promise<void>;
  list(): Promise<WorkerInfo[]>;
}

/**
 * A webhook's sending health: its failure streak and automatic disabling
 * (policy/webhook-health.ts) and the 429/503 slow-down.
 */
export interface WebhookHealthRepo {
  /** Ends the streak (a success); cheap when there is none. */
  recordSuccess(webhookId: number): Promise<void>;
  /**
   * Starts or extends the streak and returns it; null when the webhook is gone or already
   * disabled (a late result of an attempt in flight when it was disabled counts for nothing).
   */
  recordFailure(
    webhookId: number,
    options: { now: number; deliveryFailed: boolean },
  ): Promise<Streak | null>;
  /**
   * Disables an enabled webhook with a reason and clears its streak; false if it was not
   * enabled. `announce` (its webhook.disabled event) is recorded in the same transaction when
   * another enabled webhook subscribes to it.
   */
  disable(
    webhookId: number,
    options: { reason: string; now: number; announce?: OperationalEventRecord },
  ): Promise<boolean>;
  /** No attempt to the webhook before `until`; never shortens a longer pause. True if extended. */
  pause(webhookId: number, until: number): Promise<boolean>;
}

/**
 * An operational event as recorded with the state change that caused it: fanned out later, by
 * a worker, through the usual enqueue (lib/webhooks/events/operational-events.ts).
 */
export interface OperationalEventRecord {
  event: OperationalEvent;
  /** The webhook it is about, which never gets it. */
  notFor: number;
  /** The payload's `data`, as JSON text. */
  data: string;
}

export interface StoredOperationalEvent extends OperationalEventRecord {
  id: number;
  createdAt: number;
}

/** Operational events recorded and not yet fanned out. */
export interface OperationalEventRepo {
  /** Whether any waits (a read: cheap, no write lock). */
  hasPending(): Promise<boolean>;
  /** Returns up to `limit`, oldest first, leaving them (to plan their fan-out before taking). */
  peek(limit: number): Promise<StoredOperationalEvent[]>;
  /** Removes and returns up to `limit`, oldest first; in a transaction with their enqueue. */
  take(limit: number): Promise<StoredOperationalEvent[]>;
}

/** The repositories, bound to one connection or one transaction. */
export interface Repos {
  webhooks: WebhookRepo;
  queue: DeliveryQueue;
  items: ItemRepo;
  workers: WorkerRegistry;
  health: WebhookHealthRepo;
  events: OperationalEventRepo;
}

/**
 * Admin sessions ended by logout before they expire. The session cookie is signed and verifies
 * on its own; this list is what makes a logout hold in every app process sharing the database.
 */
export interface SessionRevocations {
  /** Records that session `id` is over; forgotten after `expiresAt` (epoch ms), when it would have expired. */
  revoke(id: string, expiresAt: number): Promise<void>;
  isRevoked(id: string): Promise<boolean>;
}

/** What an Idempotency-Key holds: the request it was first used for and, once answered, the answer. */
export interface IdempotencyRecord {
  /** A hash of the first request's method, path and body. */
  fingerprint: string;
  /** The first request's answer; null while it is still being handled. */
  answer: { status: number; headers: Record<string, string>; body: string } | null;
}

/** Idempotency keys of API POSTs (Stripe's and Svix's `Idempotency-Key`), each kept until it expires. */
export interface IdempotencyKeys {
  /**
   * Takes `key` of `scope` for a request with `fingerprint` until `expiresAt` (epoch ms): null when
   * it was free (or expired), so this request goes on; else what the key already holds.
   */
  begin(
    scope: string,
    key: string,
    request: { fingerprint: string; now: number; expiresAt: number },
  ): Promise<IdempotencyRecord | null>;
  /**
   * Keeps the answer of the request that took `key`, for its repeats until `expiresAt` (epoch
   * ms; begin's expiresAt bounds only the wait for this answer).
   */
  finish(
    scope: string,
    key: string,
    kept: { answer: NonNullable<IdempotencyRecord["answer"]>; expiresAt: number },
  ): Promise<void>;
  /** Frees `key` (the request failed on the server's side: a repeat runs it again). */
  abandon(scope: string, key: string): Promise<void>;
}

/** An API token as listed: never the token itself, which only its holder has. */
export interface ApiToken {
  name: string;
  /** May change things (any method); false: GET and HEAD only. */
  write: boolean;
  createdAt: number;
  lastUsedAt: number | null;
  /** When it stops being accepted; null: never. */
  expiresAt: number | null;
}

/** The `tokens add` name is taken. */
export class DuplicateTokenNameError extends Error {
  override name = "DuplicateTokenNameError";
  constructor(readonly tokenName: string) {
    super(`An API token named ${JSON.stringify(tokenName)} already exists`);
  }
}

/**
 * API tokens for programs that need less than ADMIN_TOKEN (a monitoring job that reads). Only
 * a hash of each token is stored (lib/app/auth/api-tokens.ts makes and hashes them).
 */
export interface ApiTokenRepo {
  /** Throws DuplicateTokenNameError when the name is taken. */
  create(token: {
    name: string;
    hash: string;
    write: boolean;
    expiresAt: number | null;
  }): Promise<ApiToken>;
  /** By name. */
  list(): Promise<ApiToken[]>;
  /** Deletes it; false when no token has that name. */
  revoke(name: string): Promise<boolean>;
  /** The token whose hash this is, expired or not; null when none. */
  findByHash(hash: string): Promise<ApiToken | null>;
  /** Records a use (at most the caller's business how often). */
  markUsed(name: string, at: number): Promise<void>;
}

/**
 * The whole application store (SQLite or PostgreSQL, chosen by DATABASE_URL).
 * `transaction` runs `fn` with repos that join one transaction, so an item change and its
 * deliveries commit together or not at all. `fn` must not do network I/O.
 */
export interface Store extends Repos {
  readonly kind: "sqlite" | "postgres";
  sessions: SessionRevocations;
  tokens: ApiTokenRepo;
  idempotency: IdempotencyKeys;
  transaction<T>(fn: (tx: Repos) => Promise<T>): Promise<T>;
  /**
   * Resolves soon after another connection or process may have enqueued work (SQLite: a
   * `PRAGMA data_version` change; PostgreSQL: NOTIFY), or after `timeoutMs`, or on abort.
   */
  waitForChange(options: { timeoutMs: number; signal?: AbortSignal }): Promise<void>;
  /**
   * Resolves at once while the database answers; after a lost connection (PostgreSQL), as soon
   * as it answers again (a query, or the LISTEN connection back), or on abort.
   */
  untilReachable(options: { signal: AbortSignal }): Promise<void>;
  /** False from a lost connection until the database answers again (SQLite: always true). */
  readonly reachable: boolean;
  /** Whether `error` means the database could not be reached, rather than a statement failing. */
  isUnreachable(error: unknown): boolean;
  /**
   * SQLite on a file: why the path no longer names the file this store opened (deleted or
   * replaced), or null. Everything written would go to a file nobody else sees.
   */
  fileProblem?(): string | null;
  /**
   * Whether the database can take writes now (readiness): null when it can, else what stops it,
   * in one line (unreachable, read-only, a schema this release does not match, a nearly full
   * disk). Writes nothing that lasts.
   */
  readiness(): Promise<string | null>;
  /**
   * What a failed call means when the database itself is the cause (a full disk, a read-only
   * file, an unreachable server), in one line with the fix; null for any other failure.
   */
  explainFailure(error: unknown): string | null;
  close(): Promise<void>;
}
