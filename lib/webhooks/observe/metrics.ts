import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { DisabledKind } from "../events/operational-events.ts";
import {
  type AttemptRecord,
  type AttemptSample,
  DELIVERY_STATES,
  type DeliveryState,
  type DueSummary,
  type Webhook,
  type WorkerInfo,
} from "../model.ts";
import { disabledReasonKind } from "../policy/webhook-health.ts";
import { classifyWorkers, DEFAULT_HEARTBEAT_MS } from "./staleness.ts";

/** Labels of webhook_attempts_total: the status class, or how the attempt failed without one. */
export const ATTEMPT_OUTCOME_LABELS = [
  "2xx",
  "3xx",
  "4xx",
  "5xx",
  "timeout",
  "network_error",
  "blocked",
  "lease_expired",
  "template_error",
] as const;
export type AttemptOutcomeLabel = (typeof ATTEMPT_OUTCOME_LABELS)[number] | "other";

/** Seconds; a timeout (WEBHOOK_TIMEOUT_MS, default 10 s) lands in the 10 s bucket. */
export const ATTEMPT_DURATION_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/** The outcome label of an attempt: `2xx`…`5xx` from the status code, else how it failed. */
export function attemptOutcomeLabel(
  record: Pick<AttemptRecord, "outcome" | "statusCode">,
): AttemptOutcomeLabel {
  const { statusCode } = record;
  if (statusCode !== null && statusCode >= 200 && statusCode < 600) {
    return `${Math.floor(statusCode / 100)}xx` as AttemptOutcomeLabel;
  }
  switch (record.outcome) {
    case "timeout":
    case "network_error":
    case "blocked":
    case "lease_expired":
    case "template_error":
      return record.outcome;
    default:
      return "other";
  }
}

/** Queued deliveries that are due now (and expired leases), for the backlog gauges. */

export interface MetricsSource {
  stats(): Promise<Record<DeliveryState, number>>;
  dueSummary(now: number): Promise<DueSummary>;
  workers(): Promise<WorkerInfo[]>;
  /**
   * Given (the app's /metrics): attempts are counted from the attempts table, those recorded
   * after this process started, by any worker. Not given (a worker's --metrics-port): only what
   * observeAttempt() reports. Never both in one process, or attempts count twice.
   */
  attempts?: {
    lastId(): Promise<number>;
    after(afterId: number, limit: number): Promise<AttemptSample[]>;
  };
  /**
   * The webhooks, for the disabled and failing-notice gauges; with `attempts` (the app) also
   * for the automatic disables counter, which a worker counts itself (observeAutoDisable), and
   * the failing notices' counter.
   */
  webhooks?(): Promise<
    Array<
      Pick<Webhook, "enabled" | "disabledReason" | "disabledAt"> &
        Partial<Pick<Webhook, "id" | "failingNoticedAt" | "failingRecoveredAt">>
    >
  >;
}

/** Labels of webhook_failing_notices_total. */
export const FAILING_NOTICE_EVENTS = ["webhook.failing", "webhook.recovered"] as const;

/** Labels of webhook_disabled_webhooks; the first two also of webhook_auto_disabled_total. */
export const DISABLED_REASONS = ["gone", "failing", "manual"] as const;

export interface Metrics {
  readonly registry: Registry;
  /** The Content-Type of render()'s output. */
  readonly contentType: string;
  /** Counts one attempt of this process (the worker calls it after each attempt). */
  observeAttempt(record: Pick<AttemptRecord, "outcome" | "statusCode" | "durationMs">): void;
  /** Counts a failed store call of this worker (claim, finish, release, wait). */
  observeStoreError(phase: string): void;
  /** Counts a webhook this worker disabled automatically. */
  observeAutoDisable(kind: DisabledKind): void;
  /** Reads the database gauges and returns every metric in Prometheus text format. */
  render(): Promise<string>;
}

const ATTEMPT_PAGE = 5_000;

/** The worker's store calls, shown at 0 before any fails. */
const STORE_PHASES = ["claim", "finish", "release", "wait", "heartbeat"] as const;

type WebhookSample = Awaited<ReturnType<NonNullable<MetricsSource["webhooks"]>>>[number];

/**
 * The failing notices' gauge and counter (events/failing-notices.ts); the function counts them
 * from the webhooks read at a scrape. The app (`fromDatabase`) counts, after its first scrape, a
 * webhook whose failing_noticed_at (webhook.failing) or failing_recovered_at (webhook.recovered)
 * is past the newest seen, as automatic disables: one failing and recovering twice between two
 * scrapes counts once each. A recovery clears failing_noticed_at, so a run announced and
 * recovered between two scrapes has its webhook.failing counted from the recovery: a recovery
 * past the newest seen, of a webhook not open at the last scrape (whose notice was counted then).
 */
function failingNoticeMetrics(
  registry: Registry,
  options: { fromDatabase: boolean; now: () => number },
): (webhooks: readonly WebhookSample[]) => void {
  const open = new Gauge({
    name: "webhook_failing_notices_open",
    help: "Webhooks whose webhook.failing was announced and no webhook.recovered yet.",
    registers: [registry],
  });
  const notices = new Counter({
    name: "webhook_failing_notices_total",
    help: "Failing notices announced, by event (webhook.failing, webhook.recovered); counted by the app.",
    labelNames: ["event"] as const,
    registers: [registry],
  });
  for (const event of FAILING_NOTICE_EVENTS) notices.inc({ event }, 0);
  let cursor: number | undefined;
  let openBefore = new Set<number | undefined>();
  return (webhooks) => {
    let count = 0;
    let newest = cursor ?? Number.NEGATIVE_INFINITY;
    const openNow = new Set<number | undefined>();
    // What is past this was not counted yet (undefined: nothing is counted at this scrape).
    const since = options.fromDatabase ? cursor : undefined;
    for (const webhook of webhooks) {
      const noticed = webhook.failingNoticedAt ?? null;
      const recovered = webhook.failingRecoveredAt ?? null;
      if (noticed !== null) {
        count += 1;
        openNow.add(webhook.id);
      }
      const times = [
        ["webhook.failing", noticed],
        ["webhook.recovered", recovered],
      ] as const;
      for (const [event, at] of times) {
        if (at === null) continue;
        if (since !== undefined && at > since) notices.inc({ event });
        newest = Math.max(newest, at);
      }
      const recoveredSince = since !== undefined && recovered !== null && recovered > since;
      if (recoveredSince && !openBefore.has(webhook.id)) notices.inc({ event: "webhook.failing" });
    }
    cursor = Math.max(newest, cursor ?? options.now());
    openBefore = openNow;
    open.set(count);
  };
}

/**
 * Webhook delivery metrics on a registry of their own (never prom-client's global one), so
 * tests and several instances in one process do not share counters. Gauges are read from
 * `source` at each render (scrape), not kept up to date in between.
 */
export function createMetrics(options: {
  source: MetricsSource;
  now?: () => number;
  heartbeatIntervalMs?: number;
}): Metrics {
  const { source, now = Date.now, heartbeatIntervalMs = DEFAULT_HEARTBEAT_MS } = options;
  const registry = new Registry();
  const deliveries = new Gauge({
    name: "webhook_deliveries",
    help: "Deliveries in the database by state.",
    labelNames: ["state"] as const,
    registers: [registry],
  });
  const due = new Gauge({
    name: "webhook_deliveries_due",
    help: "Queued deliveries of enabled webhooks that are due now, expired leases included.",
    registers: [registry],
  });
  const oldestDueAge = new Gauge({
    name: "webhook_oldest_due_delivery_age_seconds",
    help: "How long the longest-waiting due delivery has been due (0 when none is).",
    registers: [registry],
  });
  const workers = new Gauge({
    name: "webhook_workers",
    help: "Workers by heartbeat status (stale: not seen for 3 heartbeat intervals).",
    labelNames: ["status"] as const,
    registers: [registry],
  });
  const attempts = new Counter({
    name: "webhook_attempts_total",
    help: "Delivery attempts by outcome (status class, timeout, network_error, blocked, …).",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "webhook_attempt_duration_seconds",
    help: "Duration of delivery attempts.",
    buckets: ATTEMPT_DURATION_BUCKETS,
    registers: [registry],
  });
  const storeErrors = new Counter({
    name: "webhook_worker_store_errors_total",
    help: "Failed database calls of this worker by phase (claim, finish, release, wait, heartbeat); retried.",
    labelNames: ["phase"] as const,
    registers: [registry],
  });
  const disabled = new Gauge({
    name: "webhook_disabled_webhooks",
    help: "Disabled webhooks by reason: gone (a 410 answer), failing (a failure streak), manual.",
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  const autoDisabled = new Counter({
    name: "webhook_auto_disabled_total",
    help: "Webhooks disabled automatically, by reason (gone: a 410 answer; failing: a streak).",
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  for (const reason of ["gone", "failing"] as const) autoDisabled.inc({ reason }, 0);
  const fromDatabase = source.attempts !== undefined;
  const countNotices = failingNoticeMetrics(registry, { fromDatabase, now });
  for (const outcome of ATTEMPT_OUTCOME_LABELS) attempts.inc({ outcome }, 0);
  for (const phase of STORE_PHASES) storeErrors.inc({ phase }, 0);

  function observeAttempt(record: Pick<AttemptRecord, "outcome" | "statusCode" | "durationMs">) {
    attempts.inc({ outcome: attemptOutcomeLabel(record) });
    duration.observe(Math.max(0, record.durationMs) / 1000);
  }

  let cursor: number | undefined;
  async function followAttempts(follow: NonNullable<MetricsSource["attempts"]>): Promise<void> {
    if (cursor === undefined) {
      cursor = await follow.lastId();
      return;
    }
    for (;;) {
      const page = await follow.after(cursor, ATTEMPT_PAGE);
      for (const sample of page) {
        observeAttempt(sample);
        cursor = Math.max(cursor, sample.id);
      }
      if (page.length < ATTEMPT_PAGE) return;
    }
  }

  // The app counts automatic disables from the database, those after its first scrape (as
  // attempts): a webhook whose disabled_at is past the newest one seen.
  let disabledCursor: number | undefined;
  async function readWebhooks(list: NonNullable<MetricsSource["webhooks"]>): Promise<void> {
    const webhooks = await list();
    const counts = { gone: 0, failing: 0, manual: 0 };
    let newest = disabledCursor ?? Number.NEGATIVE_INFINITY;
    countNotices(webhooks);
    for (const webhook of webhooks) {
      if (webhook.enabled) continue;
      const kind = disabledReasonKind(webhook.disabledReason);
      counts[kind] += 1;
      const at = webhook.disabledAt ?? Number.NEGATIVE_INFINITY;
      if (source.attempts && disabledCursor !== undefined && at > disabledCursor) {
        if (kind !== "manual") autoDisabled.inc({ reason: kind });
      }
      newest = Math.max(newest, at);
    }
    disabledCursor = Math.max(newest, disabledCursor ?? now());
    for (const reason of DISABLED_REASONS) disabled.set({ reason }, counts[reason]);
  }

  async function refresh(): Promise<void> {
    const t = now();
    const [stats, summary, registered] = await Promise.all([
      source.stats(),
      source.dueSummary(t),
      source.workers(),
    ]);
    for (const state of DELIVERY_STATES) deliveries.set({ state }, stats[state] ?? 0);
    due.set(summary.count);
    oldestDueAge.set(
      summary.oldestDueAt === null ? 0 : Math.max(0, t - summary.oldestDueAt) / 1000,
    );
    const classified = classifyWorkers(registered, t, heartbeatIntervalMs);
    const stale = classified.filter((w) => w.stale).length;
    workers.set({ status: "live" }, classified.length - stale);
    workers.set({ status: "stale" }, stale);
    if (source.attempts) await followAttempts(source.attempts);
    if (source.webhooks) await readWebhooks(source.webhooks);
  }

  // Renders run one at a time: two overlapping scrapes must not count the same attempts twice.
  let last: Promise<unknown> = Promise.resolve();
  function render(): Promise<string> {
    const next = last
      .catch(() => {})
      .then(async () => {
        await refresh();
        return registry.metrics();
      });
    last = next;
    return next;
  }

  return {
    registry,
    contentType: registry.contentType,
    observeAttempt,
    observeStoreError: (phase) => storeErrors.inc({ phase }),
    observeAutoDisable: (kind) => autoDisabled.inc({ reason: kind }),
    render,
  };
}
