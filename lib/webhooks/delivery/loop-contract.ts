import type { Claim, Delivered } from "../model.ts";
import type { Freshness } from "./lease-rules.ts";
import type { Availability } from "./loop-outage.ts";

/**
 * What the delivery loop (loop.ts) needs and what it offers: its collaborators, observers,
 * options, counts and the Worker it returns.
 */

/**
 * What the loop needs, and nothing about SQL or HTTP (cf. pg-boss's fetch/onFetch/onError): the
 * worker process (lib/worker/bind.ts) binds these to a store and the sender.
 */
export interface WorkerCollaborators {
  /**
   * Leases up to `limit` due deliveries; not those in `holding` (every delivery this worker
   * holds a claim on: in its buffer, in flight, or with a result on its way), whose leases may
   * have run out meanwhile.
   */
  claim(limit: number, holding: ReadonlySet<number>): Promise<Claim[]>;
  /**
   * Renews held claims that may not be sent as held (Freshness): resolves with those to send
   * now (lease renewed, webhook as it is now); the others must not be sent (given back, or no
   * longer ours). On a rejection none are sent and all are given back (release).
   */
  renew(claims: Claim[]): Promise<Claim[]>;
  /**
   * Makes the attempt and judges it. Throws only when `signal` aborted it (hard shutdown). Null:
   * not sent, because right before the request the claim's lease no longer outlasted it (the
   * process was paused); the claim is given back.
   */
  send(claim: Claim, signal: AbortSignal): Promise<Delivered | null>;
  /** Records the attempt; false when the lease was lost and the result discarded. */
  finish(claim: Claim, delivered: Delivered): Promise<boolean>;
  /** Gives unfinished claims back. */
  release(claims: Claim[]): Promise<void>;
  /** Resolves when work may be due (a change, the next due time) or on abort. */
  waitForWork(signal: AbortSignal): Promise<void>;
  /** Whether the database answers. Absent: always. */
  availability?: Availability;
}

/** Observers (logging, metrics). They must not throw. */
export interface WorkerHooks {
  onClaimed?(claims: Claim[]): void;
  onFinished?(claim: Claim, delivered: Delivered, applied: boolean): void;
  onReleased?(claims: Claim[]): void;
  onError?(error: unknown, context: { phase: WorkerPhase; claim?: Claim }): void;
  /** A store call of this kind succeeded after one or more failed (an outage or a full disk). */
  onStoreBack?(calls: StoreCalls): void;
}

/** Where an error happened; all but "deliver" are store calls ("wait": looking for work). */
export type WorkerPhase = "claim" | "recheck" | "deliver" | "finish" | "release" | "wait";

/**
 * The two kinds of store call a run of failures is about: the queue's leases (claim, wait,
 * recheck, release) and result writes (finish). One kind can keep failing while the other
 * works, so a claim that succeeds does not end a run of failed result writes.
 */
export type StoreCalls = "queue" | "results";

export function storeCallsOf(phase: Exclude<WorkerPhase, "deliver">): StoreCalls {
  return phase === "finish" ? "results" : "queue";
}

export interface WorkerCounts {
  claimed: number;
  successful: number;
  failed: number;
  /** Attempts that failed and were queued for a retry. */
  retried: number;
  /** Results thrown away because the lease had been lost. */
  discarded: number;
  released: number;
  /** Claims not sent because, checked before their request, they could not be sent any more. */
  withdrawn: number;
  /**
   * Results never written: the stop aborted their writes while the database did not take them
   * (an outage, a full disk). Their deliveries are sent again once their leases run out.
   */
  abandoned: number;
}

/** Counts of a worker that has done nothing yet. */
export function noCounts(): WorkerCounts {
  return {
    claimed: 0,
    successful: 0,
    failed: 0,
    retried: 0,
    discarded: 0,
    released: 0,
    withdrawn: 0,
    abandoned: 0,
  };
}

export interface WorkerOptions {
  concurrency: number;
  /**
   * Claims held ready beyond the requests in flight (default 0 here; the worker command's
   * default is four times the concurrency), so a finished request is replaced at once instead
   * of after the next database write; the buffer is topped up when half empty. They are
   * released unattempted on shutdown; after a crash they come back, like the requests in
   * flight, when their lease expires, each with a `lease_expired` attempt recorded: a claim is
   * the only record that a request may have been made, and telling sent from unsent would take
   * a database write before every request.
   */
  prefetch?: number;
  /** When a held claim may start as it is (lease-rules.ts). Absent: always. */
  freshness?: Freshness;
  hooks?: WorkerHooks;
  /**
   * The longest pause between tries to write a result that failed for another reason than an
   * outage (default 5 s; the worker passes a quarter of its lease, so the owner's write comes
   * within the grace other workers give it).
   */
  resultRetryMaxMs?: number;
  /**
   * First pause after a failed claim or wait (the database was locked or gone), doubling to
   * 30 s; cut short when the database answers again (untilReachable).
   */
  claimErrorDelayMs?: number;
}

export interface Worker {
  /**
   * Claims and delivers until `signal` aborts, then stops claiming, releases the claims not yet
   * started and waits for the requests in flight; `abortInFlight` aborts those, and their claims
   * are released too.
   */
  run(options: { signal: AbortSignal; abortInFlight?: AbortSignal }): Promise<void>;
  /**
   * Delivers everything due now (retries scheduled later are left), then resolves; `signal`
   * and `abortInFlight` stop it early as they stop run().
   */
  runOnce(options?: { signal?: AbortSignal; abortInFlight?: AbortSignal }): Promise<void>;
  /** Requests in flight. */
  readonly inFlight: number;
  readonly counts: Readonly<WorkerCounts>;
}
