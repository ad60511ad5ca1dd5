/** @jsxImportSource hono/jsx */
import type { Context } from "hono";
import { Hono } from "hono";
import { orderedFailureNote } from "../../../webhooks/delivery/ordered-note.ts";
import { type BulkPace, retryAllFailed } from "../../../webhooks/delivery/replay.ts";
import { attemptLimits } from "../../../webhooks/delivery/retrying.ts";
import {
  DELIVERY_STATES,
  type DeliveryFilter,
  type DeliveryState,
} from "../../../webhooks/model.ts";
import {
  classifyWorkers,
  DEFAULT_HEARTBEAT_MS,
  noLiveWorkerWarning,
} from "../../../webhooks/observe/staleness.ts";
import { attemptLimit } from "../../../webhooks/policy/retry-schedule.ts";
import type { Store } from "../../../webhooks/ports.ts";
import type { AppEnv } from "../../context.ts";
import { localAdminPath, positiveInt } from "../format.ts";
import type { PageContext } from "../layout.tsx";
import { NotFoundPage } from "../not-found.tsx";
import { retriedText, withNotice } from "../notices.ts";
import { pageContext, renderPage } from "../page.tsx";
import {
  BACKGROUND_TASKS,
  DELIVERIES,
  DeliveryListPage,
  DeliveryPage,
  type OverviewData,
  OverviewPage,
} from "./background-tasks-views.tsx";
import { WorkersPanel, type WorkersPanelData } from "./workers-views.tsx";

const OVERVIEW_ROWS = 10;
const PAGE_SIZE = 25;
/** The overview's tables, in order: what needs attention first. */
const OVERVIEW_STATES: DeliveryState[] = ["failed", "queued", "delivering", "successful"];

/** What the overview shows: counts per state and the newest deliveries of each. */
export async function loadOverview(
  store: Store,
  nowMs: number,
  maxAttempts: number | null = null,
): Promise<OverviewData> {
  const [stats, retrying, webhooks, ...lists] = await Promise.all([
    store.queue.stats(),
    store.queue.retryingCount(),
    store.webhooks.list(),
    ...OVERVIEW_STATES.map((state) => store.queue.list(stateFilter(state, OVERVIEW_ROWS))),
  ]);
  const sections = OVERVIEW_STATES.map((state, i) => ({ state, deliveries: lists[i] ?? [] }));
  return { stats, retrying, sections, limits: attemptLimits(webhooks, maxAttempts), nowMs };
}

/**
 * The admin's listing of a state: Failed also holds the deliveries waiting for an automatic
 * retry (queued after an attempt that was not 2XX), which stay `queued` in the database.
 */
function stateFilter(state: DeliveryState | undefined, limit: number): DeliveryFilter {
  return state === "failed" ? { failing: true, limit } : { state, limit };
}

/** The workers' heartbeats and, when deliveries are due with no live worker, the warning. */
export async function loadWorkersPanel(
  store: Store,
  nowMs: number,
  heartbeatIntervalMs: number,
): Promise<WorkersPanelData> {
  const [registered, due] = await Promise.all([
    store.workers.list(),
    store.queue.dueSummary(nowMs),
  ]);
  return {
    workers: classifyWorkers(registered, nowMs, heartbeatIntervalMs),
    due,
    warning: noLiveWorkerWarning({
      dueCount: due.count,
      workers: registered,
      now: nowMs,
      intervalMs: heartbeatIntervalMs,
    }),
    heartbeatIntervalMs,
    nowMs,
  };
}

/** System > Background Tasks: deliveries by state, one delivery with its attempts, retries. */
export function backgroundTaskRoutes(deps: {
  store: Store;
  now: () => Date;
  heartbeatIntervalMs?: number;
  /** WEBHOOK_MAX_ATTEMPTS as the workers have it ("attempt 3 of 8"); null: each schedule's. */
  maxAttempts?: number | null;
  /** Chunks of "Retry all failed" and the pause between them (default: DEFAULT_PACE). */
  bulkPace?: BulkPace;
}): Hono<AppEnv> {
  const { store, now } = deps;
  const heartbeatIntervalMs = deps.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_MS;
  const maxAttempts = deps.maxAttempts ?? null;
  async function limitOf(webhookId: number): Promise<number | null> {
    const webhook = await store.webhooks.get(webhookId);
    return webhook === null ? null : attemptLimit(webhook.retrySchedule, maxAttempts);
  }
  const routes = new Hono<AppEnv>();

  routes.get("/", async (c) => {
    const nowMs = now().getTime();
    const [data, workers] = await Promise.all([
      loadOverview(store, nowMs, maxAttempts),
      loadWorkersPanel(store, nowMs, heartbeatIntervalMs),
    ]);
    return renderPage(
      c,
      <OverviewPage page={await currentPage(c, store)} data={data}>
        <WorkersPanel data={workers} />
      </OverviewPage>,
    );
  });

  routes.get("/deliveries", async (c) => {
    const stateParam = c.req.query("state");
    const state = DELIVERY_STATES.find((s) => s === stateParam);
    const webhookId = positiveInt(c.req.query("webhook")) ?? undefined;
    const itemId = positiveInt(c.req.query("item")) ?? undefined;
    const before = positiveInt(c.req.query("before"));
    const messageId = c.req.query("message_id")?.trim() || undefined;
    const filter: DeliveryFilter = { ...stateFilter(state, PAGE_SIZE + 1), webhookId };
    if (before !== null) filter.beforeId = before;
    // An item's deliveries: one range of the object index (deliveries record their object).
    if (itemId !== undefined) filter.object = { model: "item", id: itemId };
    // A webhook-id a receiver logged: the one delivery that sent it (message ids are unique).
    const rows =
      messageId === undefined
        ? await store.queue.list(filter)
        : (await store.queue.search({ messageId }, { limit: 1, offset: 0 })).deliveries;
    const deliveries = rows.slice(0, PAGE_SIZE);
    const query = new URLSearchParams();
    if (state) query.set("state", state);
    if (webhookId !== undefined) query.set("webhook", String(webhookId));
    if (itemId !== undefined) query.set("item", String(itemId));
    if (messageId !== undefined) query.set("message_id", messageId);
    const webhook = webhookId === undefined ? null : await store.webhooks.get(webhookId);
    const item = itemId === undefined ? null : await store.items.get(itemId);
    const title = [
      state ? `${state[0]?.toUpperCase()}${state.slice(1)} deliveries` : "All deliveries",
      webhook ? `to ${webhook.name}` : webhookId !== undefined ? `to webhook #${webhookId}` : "",
      item ? `of item ${item.sku}` : itemId !== undefined ? `of item #${itemId}` : "",
      messageId !== undefined ? `with webhook-id ${messageId}` : "",
    ]
      .filter(Boolean)
      .join(" ");
    const data = {
      title,
      messageId: messageId ?? "",
      deliveries,
      query,
      before,
      olderThan: rows.length > PAGE_SIZE ? (deliveries.at(-1)?.id ?? null) : null,
      retryAllFailed: state === "failed" && webhookId === undefined && itemId === undefined,
      limits: attemptLimits(await store.webhooks.list(), maxAttempts),
      nowMs: now().getTime(),
    };
    return renderPage(c, <DeliveryListPage page={await currentPage(c, store)} data={data} />);
  });

  routes.get("/deliveries/:id", async (c) => {
    const id = positiveInt(c.req.param("id"));
    const found = id === null ? null : await store.queue.get(id);
    if (!found) return renderPage(c, <NotFoundPage page={pageContext(c)} what="Delivery" />, 404);
    return renderPage(
      c,
      <DeliveryPage
        page={await currentPage(c, store)}
        delivery={found.delivery}
        orderedNote={await orderedFailureNote(store.queue, found.delivery)}
        attempts={found.attempts}
        limit={(await limitOf(found.delivery.webhookId)) ?? undefined}
        nowMs={now().getTime()}
      />,
    );
  });

  routes.post("/deliveries/:id/retry", async (c) => {
    const id = positiveInt(c.req.param("id"));
    if (id === null)
      return renderPage(c, <NotFoundPage page={pageContext(c)} what="Delivery" />, 404);
    const form = await c.req.parseBody();
    const back = localAdminPath(form.return_to, `${DELIVERIES}/${id}`);
    const changed = await store.queue.retry([id], now().getTime());
    return c.redirect(withNotice(back, changed > 0 ? "retried" : "not-retried", id), 303);
  });

  routes.post("/retry-failed", async (c) => {
    const form = await c.req.parseBody();
    const back = localAdminPath(form.return_to, BACKGROUND_TASKS);
    const changed = await retryAllFailed(store.queue, now().getTime(), deps.bulkPace);
    return c.redirect(withNotice(back, "retried-all", changed), 303);
  });

  return routes;
}

/** The page context, with a Retry notice saying where that delivery is now. */
async function currentPage(c: Context<AppEnv>, store: Store): Promise<PageContext> {
  const page = pageContext(c);
  const id = c.req.query("notice") === "retried" ? positiveInt(c.req.query("n")) : null;
  if (id === null) return page;
  const found = await store.queue.get(id);
  return { ...page, notice: retriedText(id, found?.delivery.state ?? null) };
}
