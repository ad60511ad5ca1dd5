/**
 * The values of webhook delivery: webhooks, deliveries, attempts, claims and outcomes. Imports
 * only the retry schedule's type; the storage interfaces over these values are in ports.ts.
 * Times are epoch milliseconds.
 */

import type { RetrySchedule } from "./policy/retry-schedule.ts";

export const DELIVERY_STATES = ["queued", "delivering", "successful", "failed"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** Events an application change emits; a webhook subscribed to "*" gets all of them. */
export const ITEM_EVENTS = ["item.created", "item.updated", "item.deleted"] as const;
export type ItemEvent = (typeof ITEM_EVENTS)[number];
/**
 * Operational events (Svix's `endpoint.disabled`, `message.attempt.exhausted`): about the
 * delivery itself, not the inventory. A webhook gets them only when it names them: "*" means
 * the item events.
 */
export const OPERATIONAL_EVENTS = [
  "webhook.disabled",
  "delivery.exhausted",
  "webhook.failing",
  "webhook.recovered",
] as const;
export type OperationalEvent = (typeof OPERATIONAL_EVENTS)[number];
/** "ping" is only ever queued for one webhook, by "Send test"; "*" does not match it. */
export type EventName = ItemEvent | OperationalEvent | "ping";
export const ALL_EVENTS = "*";

export interface Webhook {
  id: number;
  name: string;
  url: string;
  method: string;
  contentType: string;
  /** Additional headers in the order given (`Name: Value` lines in NetBox). */
  headers: Array<[string, string]>;
  secret: string | null;
  /**
   * The secret before the last rotation, still signing beside `secret` until
   * `previousSecretUntil` (the grace period); null when there is none.
   */
  previousSecret: string | null;
  previousSecretUntil: number | null;
  /** Subscribed event names, or ["*"]. */
  events: string[];
  enabled: boolean;
  /** Why and when it was disabled (by a person, or automatically after a failure streak). */
  disabledReason: string | null;
  disabledAt: number | null;
  /** Optional send-rate cap across all workers. */
  maxPerSecond: number | null;
  /** Jinja2 template of the request body; null sends NetBox's default JSON body. */
  bodyTemplate: string | null;
  /** Which changes queue a delivery (NetBox's condition set); null: every subscribed change. */
  conditions: ConditionSet | null;
  /** Verify the receiver's TLS certificate (NetBox's ssl_verification); on by default. */
  sslVerification: boolean;
  /** PEM file of the CA(s) to trust for this webhook instead of the system's, or null. */
  caFile: string | null;
  /**
   * PEM files of the client certificate and its key, presented to a receiver that asks for one
   * (mutual TLS); both or neither, null when none.
   */
  clientCertFile: string | null;
  clientKeyFile: string | null;
  /** Timeout of one attempt; null falls back to WEBHOOK_TIMEOUT_MS. */
  timeoutMs: number | null;
  /** When a failed attempt is tried again (policy/retry-schedule.ts); `day` by default. */
  retrySchedule: RetrySchedule;
  /**
   * Deliveries of one object (objectModel, objectId) are sent one at a time, in the order the
   * changes were committed; off by default.
   */
  ordered: boolean;
  /**
   * The failed attempt of a delivery (its number) at which webhook.failing is announced, once
   * per failing run (events/failing-notices.ts); 0 never. DEFAULT_FAILING_NOTICE_AFTER by default.
   */
  failingNoticeAfter: number;
  /**
   * When webhook.failing was announced for the current failing run; null when none is open
   * (none yet, or webhook.recovered since). Set by the stores; absent on a Webhook built elsewhere.
   */
  failingNoticedAt?: number | null;
  /** When the last webhook.recovered was; null before any. Set by the stores, as above. */
  failingRecoveredAt?: number | null;
  /**
   * Start of the current failure streak (every attempt failed since), null while healthy.
   * Set by the stores; absent on a Webhook built elsewhere (unknown).
   */
  failingSince?: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface NewWebhook {
  name: string;
  url: string;
  method?: string;
  contentType?: string;
  headers?: Array<[string, string]>;
  secret?: string | null;
  events?: string[];
  enabled?: boolean;
  maxPerSecond?: number | null;
  bodyTemplate?: string | null;
  conditions?: ConditionSet | null;
  sslVerification?: boolean;
  caFile?: string | null;
  clientCertFile?: string | null;
  clientKeyFile?: string | null;
  timeoutMs?: number | null;
  ordered?: boolean;
  retrySchedule?: RetrySchedule;
  failingNoticeAfter?: number;
}

/**
 * A change to a webhook. A new `secret` without `previousSecret` ends any grace period; a
 * rotation (rotation.ts) gives both.
 */
export type WebhookPatch = Partial<NewWebhook> & {
  disabledReason?: string | null;
  previousSecret?: string | null;
  previousSecretUntil?: number | null;
};

export interface Delivery {
  id: number;
  webhookId: number;
  webhookName: string;
  /** The Standard Webhooks `webhook-id`: fixed at enqueue, the same on every retry. */
  messageId: string;
  event: string;
  /** The exact body sent (and signed), stored as text: rendered at enqueue when templated. */
  payload: string;
  /** The URL and headers rendered at enqueue when the webhook's are templated, else null. */
  url: string | null;
  headers: Array<[string, string]> | null;
  /**
   * The template context (NetBox's default body) when the payload was rendered from a template,
   * so what the template was given stays visible; null when the payload is that body itself.
   */
  context: string | null;
  /** A template failed to render at enqueue: failed at once, nothing is ever sent. */
  templateFailed: boolean;
  /**
   * Not rendered at enqueue for want of time (a busy machine, or the change's renders out of
   * wall-clock time): the worker renders it from `context` before the send, with the webhook's
   * templates as they are then and a budget of its own, and keeps what rendered.
   */
  renderPending: boolean;
  /** The changed object (NetBox's content type and object id), or null (a ping, older rows). */
  objectModel: string | null;
  objectId: number | null;
  /**
   * Queued for an ordered webhook (an object's change, the webhook ordered at enqueue): sent
   * only once every earlier delivery of the same object to the same webhook has ended.
   */
  ordered: boolean;
  state: DeliveryState;
  /** Attempts started so far; the claim that makes attempt N sets this to N. */
  attempts: number;
  nextAttemptAt: number;
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
  completedAt: number | null;
}

/**
 * How an attempt ended; metrics group attempts by this (2xx/4xx/5xx come from statusCode).
 * "lease_expired": the worker holding the delivery stopped reporting (crashed) before a result;
 * the queue records it when it hands the delivery to another worker.
 */
export type AttemptOutcome =
  | "success"
  | "http_error"
  | "timeout"
  | "network_error"
  | "blocked"
  | "lease_expired"
  | "template_error";

export interface AttemptRecord {
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  outcome: AttemptOutcome;
  error: string | null;
  /** Response headers as `name: value` lines, and the body, each cut to 4 KiB. */
  responseHeaders: string | null;
  responseBody: string | null;
  /**
   * The URL this attempt went to (or was refused for): the delivery's rendered URL or the
   * webhook's at the time, so attempts before and after a URL change tell apart. Null when no
   * URL was reached for (a template that did not render, a lease lost in a crash).
   */
  url?: string | null;
}

export interface Attempt extends AttemptRecord {
  id: number;
  deliveryId: number;
  attempt: number;
  workerId: string | null;
}

/**
 * A leased delivery. The claim is its fencing token: a result or release applies only while the
 * delivery is still leased to `workerId` under `generation` (+1 at every lease, never lowered),
 * so it can never overwrite what a newer claim wrote. `attempt` (= delivery.attempts) numbers
 * the attempt it records.
 */
export interface Claim {
  delivery: Delivery;
  webhook: Webhook;
  attempt: number;
  workerId: string;
  generation: number;
  /**
   * The webhook's rate limit or 429/503 pause reserved this send slot: do not start the request
   * before this time (epoch ms, maybe fractional). Absent: send at once.
   */
  notBefore?: number;
}

/** What happens to a delivery after an attempt: decided by pure policy, applied by the queue. */
export type Outcome =
  | { state: "successful" }
  | { state: "failed" }
  | { state: "queued"; nextAttemptAt: number };

/** One test of NetBox's conditions: `attr` is a dotted path into the changed object's data. */
export interface Condition {
  attr: string;
  value: unknown;
  op?: ConditionOp;
  negate?: boolean;
}
export const CONDITION_OPS = ["eq", "gt", "gte", "lt", "lte", "in", "contains", "regex"] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];
/** `{"and": [...]}` or `{"or": [...]}` of conditions and nested sets. */
export type ConditionSet = { and: ConditionNode[] } | { or: ConditionNode[] };
export type ConditionNode = Condition | ConditionSet;

/**
 * One attempt's result and what it leads to, as judged (policy/judge.ts): the delivery's next
 * state, and what to write about its webhook once the result is recorded.
 */
export interface Delivered {
  record: AttemptRecord;
  outcome: Outcome;
  /** The receiver asked to slow down (429/503): no attempt to the webhook before this time. */
  pauseWebhookUntil?: number;
  /** The webhook's failure streak: ended by a success, extended by a failure; absent: untouched. */
  streak?: "end" | "extend";
}

/** An application change, turned into NetBox's payload shape at enqueue. */
export interface ChangeEvent {
  event: EventName;
  model: string;
  username: string;
  requestId: string;
  data: unknown;
  prechange: unknown;
  postchange: unknown;
  timestamp: Date;
  /** A webhook that never gets this change: the one an operational event is about. */
  notFor?: number;
}

export interface DeliveryFilter {
  state?: DeliveryState;
  webhookId?: number;
  limit?: number;
  /** Newest first; pass the last id seen to get the next page. */
  beforeId?: number;
  /** Only deliveries of changes to this object (e.g. `{ model: "item", id: 7 }`). */
  object?: { model: string; id: number };
  /**
   * Failed ones and those waiting for an automatic retry (queued after an attempt whose answer
   * was not 2XX): the admin's Failed list. `state` is then left aside.
   */
  failing?: boolean;
}

/**
 * Which deliveries an operator means (the API's and the CLI's filter for listing, retry and
 * replay): every field optional, all those given must hold.
 */
export interface DeliverySearch {
  webhookId?: number;
  /** The message id a receiver sees as the `webhook-id` header (unique: one delivery at most). */
  messageId?: string;
  /** Any of these states. */
  states?: readonly DeliveryState[];
  /**
   * Failed ones and those waiting for an automatic retry (queued after an attempt whose answer
   * was not 2XX), as the admin's Failed list: "retry all failed". With `states`, both must hold.
   */
  failing?: boolean;
  event?: string;
  objectModel?: string;
  objectId?: number;
  /** Queued at or after (epoch ms). */
  since?: number;
  /** Queued before (epoch ms). */
  until?: number;
}

/** Queued deliveries due now, for metrics. */
export interface DueSummary {
  count: number;
  /** When the longest-waiting due delivery became due; null when nothing is due. */
  oldestDueAt: number | null;
}

/** An attempt as read back from the database (the app counts every worker's attempts). */
export interface AttemptSample {
  id: number;
  statusCode: number | null;
  outcome: AttemptOutcome;
  durationMs: number;
}

/** A worker's heartbeat row: which workers run, and how busy they are. */
export interface WorkerInfo {
  id: string;
  host: string;
  pid: number;
  version: string;
  startedAt: number;
  lastSeenAt: number;
  inFlight: number;
  concurrency: number;
  /** How often it records its heartbeat; it counts as gone after three beats missed. */
  heartbeatMs?: number;
}

/** A webhook's current failure streak (endpoint health). */
export interface Streak {
  /** When the first failed attempt since the last success happened; null while healthy. */
  streakStartedAt: number | null;
  failedDeliveries: number;
}

/**
 * What is stored for one webhook's delivery of a change, rendered at enqueue (render.ts): the
 * body that will be signed and sent (on every attempt, byte for byte), and the URL and headers
 * when the webhook's are templated.
 */
export interface RenderedDelivery {
  payload: string;
  /** Null: the webhook's own URL and headers are used (they are plain text). */
  url: string | null;
  headers: Array<[string, string]> | null;
  /** The template context (the default body) when the payload is not that body, else null. */
  context: string | null;
  /** Why a template failed: the delivery is then failed at once with this error. */
  templateError: string | null;
}

/** One delivery to insert: queued, or failed at once when `templateError` is set. */
export interface PlannedDelivery extends RenderedDelivery {
  webhookId: number;
  /** Left for the worker to render (Delivery.renderPending): `context` holds the change. */
  renderLater?: boolean;
}

/**
 * A change's deliveries planned (templates rendered, conditions evaluated) before its write
 * transaction, so the renders hold no lock. What was planned for a webhook holds while the
 * change and that webhook are as they were read; enqueue re-checks both at insert (replan).
 */
export interface ChangePlan {
  /** The change's default body: the plan is for this change only. */
  body: string;
  only: number | undefined;
  /** Each enabled webhook as read when planning, by id (fingerprint). */
  seen: ReadonlyMap<number, string>;
  planned: PlannedDelivery[];
  /** Wall-clock time the renders took, out of the change's (CHANGE_WALL_CEILING_MS). */
  spentMs: number;
}
