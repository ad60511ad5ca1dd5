/** @jsxImportSource hono/jsx */

import type { Child } from "hono/jsx";
import { maskUrlPassword, maskUrlPasswords } from "../../../text/url-credentials.ts";
import { isRetrying, retryingText } from "../../../webhooks/delivery/retrying.ts";
import type { Attempt, Delivery, DeliveryState } from "../../../webhooks/model.ts";
import { formatDuration, formatTime, prettyJson, relativeTime, truncate } from "../format.ts";
import { Layout, type PageContext, PostButton } from "../layout.tsx";
import { MessageSearch } from "./message-search.tsx";

export const BACKGROUND_TASKS = "/admin/background-tasks";
export const DELIVERIES = `${BACKGROUND_TASKS}/deliveries`;

const STATE_TITLES: Record<DeliveryState, string> = {
  queued: "Queued",
  delivering: "Delivering",
  failed: "Failed",
  successful: "Recent successful",
};

export interface OverviewData {
  stats: Record<DeliveryState, number>;
  /**
   * Queued deliveries waiting for an automatic retry: listed under Failed, so counted there
   * (and still queued in `stats`).
   */
  retrying?: number;
  /**
   * The newest few deliveries per state, in the order the page shows them; under failed also
   * those waiting for an automatic retry (retrying.ts).
   */
  sections: Array<{ state: DeliveryState; deliveries: Delivery[] }>;
  /** Attempts each webhook's deliveries get, by webhook id ("attempt 3 of 8"). */
  limits?: Map<number, number>;
  nowMs: number;
}

/** `children`: panels shown under the counts (e.g. running workers, warnings). */
export function OverviewPage(props: { page: PageContext; data: OverviewData; children?: Child }) {
  const { page, data } = props;
  // What each section and link lists: Failed holds those waiting for a retry too.
  const retrying = data.retrying ?? 0;
  const listed = { ...data.stats, failed: data.stats.failed + retrying };
  return (
    <Layout title="Background Tasks" page={page}>
      <h1>Background Tasks</h1>
      <MessageSearch action={DELIVERIES} value="" />
      <StateCounts stats={listed} retrying={retrying} />
      {props.children}
      {listed.failed > 0 ? (
        <div class="actions">
          <PostButton
            action={`${BACKGROUND_TASKS}/retry-failed`}
            label={`Retry all failed (${listed.failed})`}
            csrfToken={page.csrfToken}
          />
        </div>
      ) : null}
      {data.sections.map((section) => (
        <section>
          <h2>
            {STATE_TITLES[section.state]}{" "}
            <a class="muted" href={`${DELIVERIES}?state=${section.state}`}>
              (all {listed[section.state]})
            </a>
          </h2>
          <DeliveryTable
            deliveries={section.deliveries}
            page={page}
            nowMs={data.nowMs}
            limits={data.limits}
            returnTo={BACKGROUND_TASKS}
          />
        </section>
      ))}
    </Layout>
  );
}

/** The count per state; failed counts those waiting for a retry too, as its list shows them. */
function StateCounts(props: { stats: Record<DeliveryState, number>; retrying: number }) {
  const order: DeliveryState[] = ["queued", "delivering", "successful", "failed"];
  return (
    <div class="counts">
      {order.map((state) => (
        <a class={state} href={`${DELIVERIES}?state=${state}`}>
          <strong>{props.stats[state]}</strong>
          {state}
          {state === "failed" && props.retrying > 0 ? (
            <span class="muted"> ({props.retrying} waiting for a retry)</span>
          ) : null}
        </a>
      ))}
    </div>
  );
}

export interface DeliveryListData {
  title: string;
  /** The webhook-id searched for, or "" (shown again in the search box). */
  messageId?: string;
  deliveries: Delivery[];
  /** The query of this listing without `before`, to build the pager's links. */
  query: URLSearchParams;
  before: number | null;
  /** Id to pass as `before` for the next (older) page, or null on the last page. */
  olderThan: number | null;
  /** Offer "Retry all failed" (the list of every failed delivery). */
  retryAllFailed?: boolean;
  limits?: Map<number, number>;
  nowMs: number;
}

export function DeliveryListPage(props: { page: PageContext; data: DeliveryListData }) {
  const { page, data } = props;
  const older = new URLSearchParams(data.query);
  if (data.olderThan !== null) older.set("before", String(data.olderThan));
  return (
    <Layout title={data.title} page={page}>
      <p>
        <a href={BACKGROUND_TASKS}>← Background Tasks</a>
      </p>
      <h1>{data.title}</h1>
      <MessageSearch action={DELIVERIES} value={data.messageId ?? ""} />
      {data.retryAllFailed && data.deliveries.some((d) => d.state === "failed") ? (
        <div class="actions">
          <PostButton
            action={`${BACKGROUND_TASKS}/retry-failed`}
            label="Retry all failed"
            csrfToken={page.csrfToken}
            fields={{ return_to: `${DELIVERIES}?${data.query}` }}
          />
        </div>
      ) : null}
      <DeliveryTable
        deliveries={data.deliveries}
        page={page}
        nowMs={data.nowMs}
        limits={data.limits}
        returnTo={`${DELIVERIES}?${data.query}`}
      />
      <div class="pager">
        {data.before !== null ? <a href={`${DELIVERIES}?${data.query}`}>« Newest</a> : null}
        {data.olderThan !== null ? <a href={`${DELIVERIES}?${older}`}>Older ›</a> : null}
      </div>
    </Layout>
  );
}

export function DeliveryTable(props: {
  deliveries: Delivery[];
  page: PageContext;
  nowMs: number;
  limits?: Map<number, number>;
  returnTo: string;
}) {
  if (props.deliveries.length === 0) return <p class="empty">None.</p>;
  return (
    <table class="list">
      <thead>
        <tr>
          <th class="num">ID</th>
          <th>Webhook</th>
          <th>Event</th>
          <th>State</th>
          <th class="num">Attempts</th>
          <th>Last result</th>
          <th>Created</th>
          <th>Next attempt / completed</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {props.deliveries.map((d) => (
          <tr id={`delivery-${d.id}`}>
            <td class="num">
              <a href={`${DELIVERIES}/${d.id}`}>#{d.id}</a>
            </td>
            <td data-label="Webhook">
              <a href={`${DELIVERIES}?webhook=${d.webhookId}`}>{d.webhookName}</a>
            </td>
            <td data-label="Event">{d.event}</td>
            <td data-label="State">
              <StateBadge state={d.state} />
            </td>
            <td class="num" data-label="Attempts">
              {d.attempts}
            </td>
            <td class="wrap" data-label="Last result">
              {lastResult(d)}
            </td>
            <td data-label="Created">{formatTime(d.createdAt)}</td>
            <td data-label="Next attempt / completed">
              {d.completedAt !== null
                ? formatTime(d.completedAt)
                : isRetrying(d)
                  ? retryingText(d, props.limits?.get(d.webhookId), props.nowMs)
                  : d.state === "queued"
                    ? `${formatTime(d.nextAttemptAt)} (${relativeTime(d.nextAttemptAt, props.nowMs)})`
                    : d.leaseExpiresAt !== null
                      ? `lease until ${formatTime(d.leaseExpiresAt)}`
                      : "–"}
            </td>
            <td class="action">
              {d.state === "failed" || isRetrying(d) ? (
                <PostButton
                  action={`${DELIVERIES}/${d.id}/retry`}
                  label="Retry"
                  csrfToken={props.page.csrfToken}
                  fields={{ return_to: props.returnTo }}
                />
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function lastResult(d: Delivery): string {
  const status = d.lastStatus === null ? null : `HTTP ${d.lastStatus}`;
  if (!d.lastError) return status ?? "–";
  const error = truncate(maskUrlPasswords(d.lastError), 120);
  // The sender's errors usually start with the status already ("HTTP 500 Internal Server Error").
  return status === null || error.startsWith(status) ? error : `${status}: ${error}`;
}

export function StateBadge(props: { state: string }) {
  return <span class={`badge ${props.state}`}>{props.state}</span>;
}

export function DeliveryPage(props: {
  page: PageContext;
  delivery: Delivery;
  /** A failed ordered delivery: later changes of its object went on without it. */
  orderedNote?: string | null;
  attempts: Attempt[];
  /** Attempts its webhook's deliveries get ("attempt 3 of 8"); undefined when not known. */
  limit?: number;
  nowMs: number;
}) {
  const { page, delivery: d } = props;
  const self = `${DELIVERIES}/${d.id}`;
  return (
    <Layout title={`Delivery #${d.id}`} page={page}>
      <p>
        <a href={BACKGROUND_TASKS}>← Background Tasks</a>
      </p>
      <h1>
        Delivery #{d.id} <StateBadge state={d.state} />
      </h1>
      {d.templateFailed ? (
        <p class="error-box" role="status">
          Its template failed when the change was queued: nothing is sent for it. Fix the webhook's
          template (Preview shows the result), then Retry renders it again from this change.
        </p>
      ) : d.state === "failed" || isRetrying(d) ? (
        <div class="actions">
          {isRetrying(d) ? (
            <span class="muted">{retryingText(d, props.limit, props.nowMs)}</span>
          ) : null}
          <PostButton
            action={`${self}/retry`}
            label="Retry"
            csrfToken={page.csrfToken}
            fields={{ return_to: self }}
          />
        </div>
      ) : null}
      {d.renderPending ? (
        <p class="notice" role="status">
          Its templates are rendered by a worker just before the send (there was no time when the
          change was queued): the payload below is the change until then.
        </p>
      ) : null}
      {props.orderedNote ? (
        <p class="notice" role="status">
          {props.orderedNote}
        </p>
      ) : null}
      <table class="fields">
        <tbody>
          <Field name="Webhook">
            <a href={`/admin/webhooks/${d.webhookId}`}>{d.webhookName}</a>
          </Field>
          <Field name="Event">{d.event}</Field>
          <Field name="Message id (webhook-id)">
            <code>{d.messageId}</code>
          </Field>
          <Field name="Attempts">{d.attempts}</Field>
          <Field name="Created">{formatTime(d.createdAt)}</Field>
          <Field name="Next attempt">
            {d.state === "queued"
              ? `${formatTime(d.nextAttemptAt)} (${relativeTime(d.nextAttemptAt, props.nowMs)})`
              : "–"}
          </Field>
          <Field name="Completed">{formatTime(d.completedAt)}</Field>
          <Field name="Last result">{lastResult(d)}</Field>
          {d.url !== null ? (
            <Field name="URL (rendered)">
              <code>{maskUrlPassword(d.url)}</code>
            </Field>
          ) : null}
          {d.headers !== null ? (
            <Field name="Headers (rendered)">
              <pre>{d.headers.map(([name, value]) => `${name}: ${value}`).join("\n")}</pre>
            </Field>
          ) : null}
        </tbody>
      </table>

      {d.templateFailed ? null : (
        <>
          <h2>Payload</h2>
          <pre>{prettyJson(d.payload)}</pre>
        </>
      )}
      {d.context !== null ? (
        <>
          <h2>Template context</h2>
          <pre>{prettyJson(d.context)}</pre>
        </>
      ) : null}

      <h2>Attempts</h2>
      <AttemptsTable attempts={props.attempts} />
    </Layout>
  );
}

function Field(props: { name: string; children?: Child }) {
  return (
    <tr>
      <th>{props.name}</th>
      <td class="wrap">{props.children}</td>
    </tr>
  );
}

function AttemptsTable(props: { attempts: Attempt[] }) {
  if (props.attempts.length === 0) return <p class="empty">No attempt yet.</p>;
  return (
    <table class="list">
      <thead>
        <tr>
          <th class="num">#</th>
          <th>Time</th>
          <th>URL</th>
          <th>Status</th>
          <th>Outcome</th>
          <th class="num">Duration</th>
          <th>Error</th>
          <th>Response</th>
        </tr>
      </thead>
      <tbody>
        {props.attempts.map((a) => (
          <tr id={`attempt-${a.attempt}`}>
            <td class="num" data-label="Attempt">
              {a.attempt}
            </td>
            <td data-label="Time">{formatTime(a.startedAt)}</td>
            <td class="wrap" data-label="URL">
              {a.url ? maskUrlPassword(a.url) : "–"}
            </td>
            <td data-label="Status">{a.statusCode ?? "–"}</td>
            <td data-label="Outcome">{a.outcome}</td>
            <td class="num" data-label="Duration">
              {formatDuration(a.durationMs)}
            </td>
            <td class="wrap" data-label="Error">
              {a.error ? maskUrlPasswords(a.error) : "–"}
            </td>
            <td class="wrap" data-label="Response">
              {a.responseHeaders || a.responseBody ? (
                <details>
                  <summary>{truncate(a.responseBody?.trim() || "(empty body)", 80)}</summary>
                  <pre>{`${a.responseHeaders ?? ""}\n\n${a.responseBody ?? ""}`}</pre>
                </details>
              ) : (
                "–"
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
