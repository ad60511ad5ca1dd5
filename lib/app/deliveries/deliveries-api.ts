import type { StandardSchemaV1 } from "@standard-schema/spec";
import { type Context, Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { byIdsSentence, replayByIds, retryByIds } from "../../webhooks/delivery/by-ids.ts";
import {
  type FilterField,
  readDeliveryFilter,
  readId,
  searchOf,
} from "../../webhooks/delivery/delivery-filter.ts";
import {
  type BulkPace,
  MAX_REPLAY,
  type Requeued,
  replayDeliveries,
  requeuedSentence,
  retryMatching,
} from "../../webhooks/delivery/replay.ts";
import type { Attempt, Delivery } from "../../webhooks/model.ts";
import type { Store } from "../../webhooks/ports.ts";
import { linkHeader, pageOf, setNextLink } from "../api/cursor-paging.ts";
import { fieldProblems, jsonBodyLimit } from "../api/json-body.ts";
import {
  apiErrorSchema,
  idParameter,
  json,
  notJson,
  throttled,
  tooLarge,
  unauthorized,
} from "../api/openapi-parts.ts";
import { issueField, validatedJson } from "../api/validated-json.ts";
import { validatedQuery } from "../api/validated-query.ts";
import type { AppEnv } from "../context.ts";
import { DEFAULT_PAGE_SIZE } from "../items/item-schemas.ts";
import { idParam } from "../items/items-api.ts";
import { isoOrNull } from "../webhooks/webhooks-api.ts";
import { AS_STORED, type Shown, shownFor, shownForDelivery } from "./delivery-masking.ts";
import {
  deliveryDetailSchema,
  deliveryPageSchema,
  invalid,
  listQuery,
  replayedSchema,
  replaySchema,
  retriedSchema,
  retrySchema,
} from "./delivery-schemas.ts";

export interface DeliveriesApiOptions {
  store: Store;
  now: () => Date;
  bodyLimitBytes: number;
  /** Chunks of a retry or replay and the pause between them (default: DEFAULT_PACE). */
  pace?: BulkPace;
}

/** The filter a retry takes: the listing's, but only failed deliveries are retried. */
const RETRY_FILTER: readonly FilterField[] = [
  "webhook",
  "event",
  "object_model",
  "object_id",
  "since",
  "until",
];
/** The filter a replay takes; `states` among successful and failed (both by default). */
const REPLAY_FILTER: readonly FilterField[] = [...RETRY_FILTER, "states"];

/**
 * /api/deliveries: the queue for programs. A filtered, paged listing; one delivery with its
 * attempts; retry of failed deliveries by id or filter; replay of ended ones (successful
 * included) by filter. A retry or replay takes at most MAX_REPLAY deliveries and says so when
 * it was cut.
 */
export function createDeliveriesApi(options: DeliveriesApiOptions): Hono<AppEnv> {
  const { store, now, pace } = options;
  const api = new Hono<AppEnv>();
  api.use(jsonBodyLimit(options.bodyLimitBytes));

  api.get(
    "/",
    describeRoute({
      summary: "List deliveries by filter, newest first",
      tags: ["deliveries"],
      responses: {
        200: {
          ...json(
            "A page of deliveries, newest first, how many match, and the cursor of the next page",
            deliveryPageSchema,
          ),
          headers: linkHeader,
        },
        400: invalid,
        401: unauthorized,
        429: throttled,
      },
    }),
    validatedQuery(listQuery, "Invalid filter"),
    async (c) => {
      const query = c.req.valid("query");
      const filter = searchOf(query);
      const limit = query.limit ?? DEFAULT_PAGE_SIZE;
      const offset = query.offset ?? 0;
      const beforeId = query.cursor;
      // One row more than the page: whether another page follows.
      const found = await store.queue.search(filter, {
        limit: limit + 1,
        offset,
        ...(beforeId === undefined ? {} : { beforeId }),
      });
      const page = pageOf(found.deliveries, limit);
      setNextLink(c, page.next);
      return c.json({
        deliveries: page.rows.map((d) => deliveryJson(d, shownFor(c))),
        total: found.total,
        limit,
        offset,
        next: page.next,
      });
    },
  );

  api.post(
    "/retry",
    describeRoute({
      summary:
        "Retry failed deliveries, by ids or by filter: each is queued for one more attempt now",
      description:
        "A body of ids (each id not acted on is answered in skipped, with why), or of filter fields (at least one).",
      tags: ["deliveries"],
      responses: {
        200: json("How many were queued again", retriedSchema),
        400: invalid,
        401: unauthorized,
        413: tooLarge,
        415: notJson,
        429: throttled,
      },
    }),
    ...validatedJson(retrySchema, refuseAs("Invalid retry", retryProblems)),
    async (c) => {
      const body: Record<string, unknown> = c.req.valid("json");
      if (body.ids !== undefined) {
        if (Object.keys(body).length > 1) {
          return fieldProblems(c, "Invalid retry", {
            ids: "give either ids or a filter, not both",
          });
        }
        return byIds(c, options, "Retried", body.ids);
      }
      const read = readDeliveryFilter(body, { allowed: RETRY_FILTER });
      if (!read.ok) return fieldProblems(c, "Invalid retry", read.problems);
      if (Object.keys(read.filter).length === 0)
        return needsFilter(c, "retry", ["ids", ...RETRY_FILTER]);
      const done = await retryMatching(store.queue, read.filter, now().getTime(), pace);
      return c.json(requeuedJson(done, "Retried"));
    },
  );

  api.post(
    "/replay",
    describeRoute({
      summary:
        "Replay ended deliveries (successful included) by ids or filter: the same message sent again as a new attempt",
      description:
        "A body of ids (each id not acted on is answered in skipped, with why), or of filter fields, at least one besides states.",
      tags: ["deliveries"],
      responses: {
        200: json("How many were queued again", replayedSchema),
        400: invalid,
        401: unauthorized,
        413: tooLarge,
        415: notJson,
        429: throttled,
      },
    }),
    ...validatedJson(replaySchema, refuseAs("Invalid replay", replayProblems)),
    async (c) => {
      const body: Record<string, unknown> = c.req.valid("json");
      if (body.ids !== undefined) return byIds(c, options, "Replayed", body.ids);
      const read = readDeliveryFilter(body, { allowed: REPLAY_FILTER });
      if (!read.ok) return fieldProblems(c, "Invalid replay", read.problems);
      const wrong = read.filter.states?.find((s) => s !== "successful" && s !== "failed");
      if (wrong !== undefined) {
        return fieldProblems(c, "Invalid replay", { states: replayStatesProblem(wrong) });
      }
      const { states: _, ...narrowing } = read.filter;
      if (Object.keys(narrowing).length === 0) return needsFilter(c, "replay", RETRY_FILTER);
      const done = await replayDeliveries(store.queue, read.filter, now().getTime(), pace);
      return c.json(requeuedJson(done, "Replayed"));
    },
  );

  api.get(
    "/:id",
    describeRoute({
      summary: "One delivery with its attempts",
      tags: ["deliveries"],
      parameters: [idParameter("delivery")],
      responses: {
        200: json("The delivery and its attempts, oldest first", deliveryDetailSchema),
        401: unauthorized,
        404: json("No delivery with this id", apiErrorSchema),
        429: throttled,
      },
    }),
    async (c) => {
      const id = idParam(c.req.param("id"));
      const found = id === null ? null : await store.queue.get(id);
      if (!found) return c.json({ error: "Delivery not found" }, 404);
      const webhook = c.get("readOnly") ? await store.webhooks.get(found.delivery.webhookId) : null;
      const shown = shownForDelivery(c, { webhook, delivery: found.delivery });
      const attempts = found.attempts.map((a) => attemptJson(a, shown));
      return c.json({ ...deliveryJson(found.delivery, shown), attempts });
    },
  );

  return api;
}

/** A delivery as the API answers with it; the body parsed back into JSON when it is JSON. */

export function deliveryJson(delivery: Delivery, shown: Shown = AS_STORED) {
  return {
    id: delivery.id,
    webhook_id: delivery.webhookId,
    webhook_name: delivery.webhookName,
    message_id: delivery.messageId,
    event: delivery.event,
    state: delivery.state,
    attempt_count: delivery.attempts,
    object_model: delivery.objectModel,
    object_id: delivery.objectId,
    url: delivery.url === null ? null : shown.url(delivery.url),
    template_failed: delivery.templateFailed,
    next_attempt_at: delivery.state === "queued" ? isoOrNull(delivery.nextAttemptAt) : null,
    last_status: delivery.lastStatus,
    last_error: delivery.lastError === null ? null : shown.error(delivery.lastError),
    payload: parsedOrText(delivery.payload),
    created_at: new Date(delivery.createdAt).toISOString(),
    updated_at: new Date(delivery.updatedAt).toISOString(),
    completed_at: isoOrNull(delivery.completedAt),
  };
}

function attemptJson(attempt: Attempt, shown: Shown = AS_STORED) {
  return {
    number: attempt.attempt,
    time: new Date(attempt.startedAt).toISOString(),
    url: attempt.url == null ? null : shown.url(attempt.url),
    status: attempt.statusCode,
    duration_ms: attempt.durationMs,
    outcome: attempt.outcome,
    error: attempt.error === null ? null : shown.error(attempt.error),
    worker_id: attempt.workerId,
    response_headers:
      attempt.responseHeaders === null ? null : shown.answerHeaders(attempt.responseHeaders),
    response_body: attempt.responseBody === null ? null : shown.answerBody(attempt.responseBody),
  };
}

function parsedOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** `ids`: a list of positive whole numbers, at most MAX_REPLAY; or the problem. */
function readIds(value: unknown): number[] | string {
  if (!Array.isArray(value) || value.length === 0)
    return "must be a non-empty list of delivery ids";
  if (value.length > MAX_REPLAY) return `must list at most ${MAX_REPLAY} ids`;
  const ids: number[] = [];
  for (const item of value) {
    const id = readId(item);
    if (typeof id !== "number")
      return `each must be a positive whole number (${JSON.stringify(item)} given)`;
    ids.push(id);
  }
  return ids;
}

function requeuedJson(done: Requeued, verb: "Retried" | "Replayed") {
  return {
    [verb === "Retried" ? "retried" : "replayed"]: done.count,
    matched: done.matched,
    cut: done.cut,
    limit: MAX_REPLAY,
    next_since: isoOrNull(done.nextSince),
    message: requeuedSentence(done, verb),
  };
}

/** Retry or replay by ids: the count, and each id left as it was with why. */
async function byIds(
  c: Context<AppEnv>,
  options: DeliveriesApiOptions,
  verb: "Retried" | "Replayed",
  value: unknown,
) {
  const ids = readIds(value);
  if (typeof ids === "string") {
    return fieldProblems(c, verb === "Retried" ? "Invalid retry" : "Invalid replay", { ids });
  }
  const act = verb === "Retried" ? retryByIds : replayByIds;
  const done = await act(options.store.queue, ids, options.now().getTime(), options.pace);
  const requeued = { count: done.count, matched: done.matched, cut: false, nextSince: null };
  const answer = { ...requeuedJson(requeued, verb), message: byIdsSentence(done, verb) };
  return c.json({ ...answer, skipped: done.skipped });
}

/** An empty filter would take every delivery: one of the fields must narrow it. */
function needsFilter(c: Context<AppEnv>, what: string, fields: readonly string[]): Response {
  return c.json({ error: `Nothing to ${what}: give at least one of ${fields.join(", ")}` }, 400);
}

/**
 * A body its schema refused, answered in the words the API always used: `problems` reads the
 * body by the filter's rules (delivery-filter.ts); what only the schema refuses is named by its
 * issue's field.
 */
function refuseAs(
  error: string,
  problems: (body: Record<string, unknown>) => Record<string, string>,
) {
  return (issues: readonly StandardSchemaV1.Issue[], body: unknown, c: Context<AppEnv>) => {
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return c.json({ error: "The body must be a JSON object" }, 400);
    }
    const found = problems(body as Record<string, unknown>);
    if (Object.keys(found).length > 0) return fieldProblems(c, error, found);
    const named = issues.filter((issue) => issueField(issue) !== null);
    if (named.length === 0) return c.json({ error: issues[0]?.message ?? error }, 400);
    return fieldProblems(
      c,
      error,
      Object.fromEntries(named.map((issue) => [issueField(issue), issue.message])),
    );
  };
}

/** A retry's problems by the rules its handler always had: ids, or a filter, not both. */
function retryProblems(body: Record<string, unknown>): Record<string, string> {
  if (body.ids !== undefined) {
    if (Object.keys(body).length > 1) return { ids: "give either ids or a filter, not both" };
    const ids = readIds(body.ids);
    return typeof ids === "string" ? { ids } : {};
  }
  const read = readDeliveryFilter(body, { allowed: RETRY_FILTER });
  return read.ok ? {} : read.problems;
}

/** A replay's problems: ids, or a filter by its rules, as a retry's. */
function replayProblems(body: Record<string, unknown>): Record<string, string> {
  if (body.ids !== undefined) {
    if (Object.keys(body).length > 1) return { ids: "give either ids or a filter, not both" };
    const ids = readIds(body.ids);
    return typeof ids === "string" ? { ids } : {};
  }
  const read = readDeliveryFilter(body, { allowed: REPLAY_FILTER });
  if (!read.ok) return read.problems;
  const wrong = read.filter.states?.find((s) => s !== "successful" && s !== "failed");
  return wrong === undefined ? {} : { states: replayStatesProblem(wrong) };
}

function replayStatesProblem(state: string): string {
  return `replay takes successful and failed deliveries; ${state} ones are on their way already`;
}
