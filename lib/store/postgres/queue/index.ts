import type { DeliveryQueue } from "../../../webhooks/ports.ts";
import { createPlanHint, type PlanHint } from "../../../webhooks/rendering/change-plan.ts";
import {
  type RenderTemplates,
  sharedTemplateRenderer,
} from "../../../webhooks/rendering/render-process.ts";
import { storeClock } from "../clock.ts";
import type { Db } from "../db.ts";
import { createClaim } from "./claim.ts";
import { createDue } from "./due.ts";
import { createEnqueue } from "./enqueue.ts";
import { createFinish } from "./finish.ts";
import { createKeepRendered } from "./keep-rendered.ts";
import { createListing } from "./listing.ts";
import { createMaintenance } from "./maintenance.ts";
import { type OutageWatch, timed } from "./outages.ts";
import type { Persistence } from "./persist.ts";
import { createRenew } from "./renew.ts";
import { createRerender } from "./rerender.ts";
import { createSearch } from "./search.ts";
import { createAttemptSummaries, createWebhookStats } from "./webhook-stats.ts";

export interface PostgresQueueOptions {
  /** A test clock; absent, the database's clock is used (see clock.ts). */
  now?: () => number;
  /** Called when a claim starts (see ChangeListener.markSeen). */
  markSeen?: () => void;
  /** How long `release` and a claim's send slots retry through a lost connection. */
  reconnectWaitMs?: number;
  /** What this process saw of outages (the takeover rule's grace); absent: none. */
  outages?: OutageWatch;
  /** Aborted when the store closes: retries through a lost connection give up. */
  closing?: AbortSignal;
  /** Renders a change's templates at enqueue (default: this process's renderer). */
  render?: RenderTemplates;
  /** Shared by the store's pool and transactions: whether changes are worth planning. */
  hint?: PlanHint;
}

/**
 * The delivery queue on PostgreSQL, same behaviour as the SQLite one. Claims lock due rows with
 * `FOR UPDATE SKIP LOCKED` in one short transaction that sets the lease, so workers never wait
 * for each other nor take the same row; `finish` and `release` apply only while the claim stands
 * (leased to its worker under its generation: fencing). Enqueue, retry and
 * release NOTIFY in their transaction: listeners hear it at commit, never for work that was
 * rolled back.
 */
export function createPostgresQueue(db: Db, options: PostgresQueueOptions = {}): DeliveryQueue {
  const clock = storeClock(options.now);
  const reconnectWaitMs = options.reconnectWaitMs ?? 30_000;
  const markSeen = options.markSeen ?? (() => {});
  // How claims' send slots and releases retry through a lost connection, for both.
  const persistence: Persistence = { waitMs: reconnectWaitMs, clock, signal: options.closing };
  const { finish, finishMany, release } = createFinish(db, { clock, persistence });
  const outages = options.outages ?? { returned: () => false, noted: () => {}, cameBack: () => {} };
  const listing = createListing(db);
  const searching = createSearch(db);
  const maintenance = createMaintenance(db, clock);
  const due = createDue(db, clock);
  const { enqueue, enqueueMany, plan, worthPlanning } = createEnqueue(db, clock, {
    render: options.render,
    hint: options.hint ?? createPlanHint(),
  });
  const rerender = createRerender(db, clock, options.render ?? sharedTemplateRenderer().render);
  return {
    enqueue,
    enqueueMany,
    plan,
    worthPlanning,
    claim: createClaim(db, { markSeen, clock, persistence, release, outages }),
    // A worker's calls that waited long (behind a table lock, say) mean an outage ended: the
    // next claim notes it before it judges any lease.
    renew: timed(outages, createRenew(db, clock)),
    finish: timed(outages, finish),
    finishMany: timed(outages, finishMany),
    release: timed(outages, release),
    keepRendered: timed(outages, createKeepRendered(db)),
    nextDueAt: timed(outages, due.nextDueAt),
    dueSummary: due.dueSummary,
    list: listing.list,
    get: listing.get,
    stats: listing.stats,
    retryingCount: listing.retryingCount,
    attemptTally: createWebhookStats(db),
    attemptSummaries: createAttemptSummaries(db),
    lastAttemptId: listing.lastAttemptId,
    attemptsAfter: listing.attemptsAfter,
    // A delivery failed by its template is rendered again first (its template may be fixed).
    async retry(ids, at) {
      const rendered = new Set(await rerender.byIds(ids, at));
      const others = ids.filter((id) => !rendered.has(id));
      return rendered.size + (await maintenance.retry(others, at));
    },
    search: searching.search,
    matchingIds: searching.matchingIds,
    idStates: searching.idStates,
    replay: maintenance.replay,
    purgeBatch: maintenance.purgeBatch,
    purge: maintenance.purge,
  };
}
