/** @jsxImportSource hono/jsx */

import type { Child } from "hono/jsx";
import type { FieldErrors as Errors } from "../../../inventory/schemas.ts";
import { maskUrlPassword } from "../../../text/url-credentials.ts";
import { MAX_NAME_LENGTH } from "../../../webhooks/definition/validate.ts";
import type { Webhook } from "../../../webhooks/model.ts";
import { formatRetrySchedule } from "../../../webhooks/policy/retry-schedule.ts";
import { DELIVERIES } from "../background-tasks/background-tasks-views.tsx";
import { formatTime } from "../format.ts";
import { CsrfField, FieldErrors, Layout, type PageContext, PostButton } from "../layout.tsx";
import { UrlWarning } from "./url-warning.tsx";
import { EVENT_CHOICES, WEBHOOK_METHODS, type WebhookFormValues } from "./webhook-form.ts";
import type { WebhookPreview } from "./webhook-preview.ts";
import { PreviewSection } from "./webhook-preview-view.tsx";

export const WEBHOOKS = "/admin/webhooks";

export function WebhookListPage(props: { page: PageContext; webhooks: Webhook[] }) {
  const { page } = props;
  return (
    <Layout title="Webhooks" page={page}>
      <h1>Webhooks</h1>
      <div class="actions">
        <a class="button" href={`${WEBHOOKS}/new`}>
          New webhook
        </a>
      </div>
      {props.webhooks.length === 0 ? (
        <p class="empty">No webhook yet: item changes queue nothing until one exists.</p>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th>Name</th>
              <th>URL</th>
              <th>Events</th>
              <th>State</th>
              <th>Secret</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {props.webhooks.map((w) => (
              <tr id={`webhook-${w.id}`}>
                <td>
                  <a href={`${WEBHOOKS}/${w.id}`}>{w.name}</a>
                </td>
                <td class="wrap" data-label="URL">
                  {w.method} {maskUrlPassword(w.url)}
                </td>
                <td data-label="Events">
                  {w.events.join(", ")}
                  <OptionNote webhook={w} />
                </td>
                <td data-label="State">
                  <span class={`badge ${w.enabled ? "enabled" : "disabled"}`}>
                    {w.enabled ? "enabled" : "disabled"}
                  </span>
                  <HealthNote webhook={w} />
                </td>
                <td data-label="Secret">{w.secret ? "set" : "none"}</td>
                <td class="action">
                  <div class="actions">
                    <a href={`${DELIVERIES}?webhook=${w.id}`}>Deliveries</a>
                    <PostButton
                      action={`${WEBHOOKS}/${w.id}/test`}
                      label="Send test"
                      csrfToken={page.csrfToken}
                    />
                    <PostButton
                      action={`${WEBHOOKS}/${w.id}/${w.enabled ? "disable" : "enable"}`}
                      label={w.enabled ? "Disable" : "Enable"}
                      csrfToken={page.csrfToken}
                    />
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Layout>
  );
}

/** The options a webhook uses (NetBox's, and ordering), in a line under its events. */
function OptionNote(props: { webhook: Webhook }) {
  const w = props.webhook;
  const notes = [
    w.bodyTemplate !== null ? "body template" : null,
    w.conditions !== null ? "conditions" : null,
    w.sslVerification ? null : "TLS unverified",
    w.caFile !== null ? "own CA" : null,
    w.timeoutMs !== null ? `timeout ${w.timeoutMs} ms` : null,
    w.ordered ? "ordered" : null,
    w.retrySchedule !== "day" ? `retries: ${formatRetrySchedule(w.retrySchedule)}` : null,
  ].filter((note) => note !== null);
  return notes.length === 0 ? null : <div class="muted">{notes.join(", ")}</div>;
}

/** Why and since when a webhook is off, or since when every attempt to it has failed. */
function HealthNote(props: { webhook: Webhook }) {
  const w = props.webhook;
  if (!w.enabled) {
    return (
      <div class="muted">
        {w.disabledReason ? `${w.disabledReason} ` : ""}({formatTime(w.disabledAt)})
      </div>
    );
  }
  if (w.failingSince == null) return null;
  return <div class="muted">Every attempt failed since {formatTime(w.failingSince)}</div>;
}

export function WebhookFormPage(props: {
  page: PageContext;
  values: WebhookFormValues;
  errors?: Errors;
  /** Absent when creating a webhook. */
  webhook?: Webhook;
  preview?: WebhookPreview;
  /** Workers will refuse the URL (the saved one, or the preview's rendered one). */
  urlWarning?: string | null;
  /** Shown between the form and Delete (the webhook's recent deliveries). */
  children?: Child;
}) {
  const { page, values, webhook } = props;
  const errors = props.errors?.fieldErrors ?? {};
  const title = webhook ? `Webhook ${webhook.name}` : "New webhook";
  return (
    <Layout title={title} page={page}>
      <p>
        <a href={WEBHOOKS}>← Webhooks</a>
      </p>
      <h1>{title}</h1>
      {webhook && !webhook.enabled ? (
        <div class="error-box disabled-note" role="status">
          <p>
            <strong>Disabled</strong> since {formatTime(webhook.disabledAt)}
            {webhook.disabledReason ? `: ${webhook.disabledReason}` : ""}. Its queued deliveries
            wait and are sent once it is enabled again.
          </p>
          <PostButton
            action={`${WEBHOOKS}/${webhook.id}/enable`}
            label="Enable"
            csrfToken={page.csrfToken}
          />
        </div>
      ) : null}
      {props.errors ? (
        <p class="error-box" role="alert">
          {[...props.errors.formErrors, "Please correct the fields marked below."].join(" ")}
        </p>
      ) : null}
      <form method="post" action={webhook ? `${WEBHOOKS}/${webhook.id}` : WEBHOOKS} class="stacked">
        <CsrfField token={page.csrfToken} />
        <label>
          Name
          <input type="text" name="name" value={values.name} required maxlength={MAX_NAME_LENGTH} />
          <FieldErrors messages={errors.name} />
        </label>
        <label>
          Payload URL
          <input type="text" inputmode="url" name="url" value={values.url} required />
          <span class="hint">
            Loopback and private addresses are refused when sending unless WEBHOOK_ALLOWED_HOSTS
            allows them. May use the template context after the scheme, e.g.{" "}
            <code>{"https://hooks.example/{{ model }}/{{ data.id }}"}</code>.
          </span>
          <FieldErrors messages={errors.url} />
          {props.preview ? null : <UrlWarning warning={props.urlWarning} />}
        </label>
        <label>
          HTTP method
          <select name="method">
            {WEBHOOK_METHODS.map((m) => (
              <option value={m} selected={values.method === m}>
                {m}
              </option>
            ))}
          </select>
          <FieldErrors messages={errors.method} />
        </label>
        <label>
          Content type
          <input type="text" name="contentType" value={values.contentType} />
          <FieldErrors messages={errors.contentType} />
        </label>
        <label>
          Additional headers
          <span class="hint">
            One per line, as Name: Value. Values may be templates, e.g.{" "}
            <code>{"X-Item: {{ data.sku }}"}</code>.
          </span>
          <textarea name="headers">{values.headers}</textarea>
          <FieldErrors messages={errors.headers} />
        </label>
        <fieldset>
          <legend>Events</legend>
          {EVENT_CHOICES.map((event) => (
            <label>
              <input
                type="checkbox"
                name="events"
                value={event}
                checked={values.events.includes(event)}
              />{" "}
              {event === "*" ? "all item events (*)" : event}
            </label>
          ))}
          <FieldErrors messages={errors.events} />
        </fieldset>
        <label>
          Secret
          <span class="hint">
            {webhook
              ? `${webhook.secret ? "A secret is set." : "No secret is set."} Leave empty to keep it as it is; type a new whsec_ secret to replace it.`
              : "Leave empty to generate one; it is shown once, after saving."}
          </span>
          <input type="password" name="secret" value="" autocomplete="off" />
          <FieldErrors messages={errors.secret} />
        </label>
        {webhook?.secret ? (
          <label>
            <input type="checkbox" name="removeSecret" checked={values.removeSecret} /> Remove the
            secret (requests are then sent unsigned)
          </label>
        ) : null}
        <label>
          Max deliveries per second
          <span class="hint">
            Empty for no limit. Honoured across all workers, spaced evenly; a 429 or 503 answer also
            pauses this webhook for its Retry-After.
          </span>
          <input type="text" name="maxPerSecond" value={values.maxPerSecond} inputmode="decimal" />
          <FieldErrors messages={errors.maxPerSecond} />
        </label>
        <label>
          Body template
          <span class="hint">
            Jinja2, given <code>event</code>, <code>timestamp</code>, <code>model</code>,{" "}
            <code>username</code>, <code>request_id</code>, <code>data</code> and{" "}
            <code>snapshots</code>. Empty sends the default JSON body. In JSON, insert values with{" "}
            <code>tojson</code>: <code>{'{"text": {{ data.name | tojson }}}'}</code>.
          </span>
          <textarea name="bodyTemplate" rows={6} spellcheck={false}>
            {values.bodyTemplate}
          </textarea>
          <FieldErrors messages={errors.bodyTemplate} />
        </label>
        <label>
          Conditions
          <span class="hint">
            NetBox's condition set; empty queues every subscribed change. E.g.{" "}
            <code>{'{"and": [{"attr": "quantity", "op": "lt", "value": 5}]}'}</code>; ops eq, gt,
            gte, lt, lte, in, contains, regex; negate inverts. <code>prechange.quantity</code> reads
            the item before the change (absent on a creation).
          </span>
          <textarea name="conditions" rows={4} spellcheck={false}>
            {values.conditions}
          </textarea>
          <FieldErrors messages={errors.conditions} />
        </label>
        <label>
          <input type="checkbox" name="skipSslVerification" checked={!values.sslVerification} /> Do
          not verify the receiver's TLS certificate (NetBox's SSL verification off)
        </label>
        <FieldErrors messages={errors.sslVerification} />
        <label>
          CA file path
          <span class="hint">
            A PEM file on the worker's machine with the CA(s) to trust instead of the system's.
          </span>
          <input type="text" name="caFile" value={values.caFile} />
          <FieldErrors messages={errors.caFile} />
        </label>
        <label>
          Timeout (ms)
          <span class="hint">Of one attempt; empty uses WEBHOOK_TIMEOUT_MS.</span>
          <input type="text" name="timeoutMs" value={values.timeoutMs} inputmode="numeric" />
          <FieldErrors messages={errors.timeoutMs} />
        </label>
        <label>
          <input type="checkbox" name="ordered" checked={values.ordered} /> Ordered: send each
          item's changes one at a time, in the order they were made
          <span class="hint">
            A later change of an item waits while an earlier one is queued, being sent or waiting
            for a retry; other items never wait.
          </span>
        </label>
        <FieldErrors messages={errors.ordered} />
        <label>
          Retry schedule
          <span class="hint">
            day (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), short (10 s doubling, 5 attempts), none,
            or delays such as 5s,5m,30m,2h. WEBHOOK_MAX_ATTEMPTS caps every schedule.
          </span>
          <input type="text" name="retrySchedule" value={values.retrySchedule} />
          <FieldErrors messages={errors.retrySchedule} />
        </label>
        <label>
          <input type="checkbox" name="enabled" checked={values.enabled} /> Enabled
        </label>
        <div class="actions">
          <button type="submit" class="primary">
            {webhook ? "Save" : "Create webhook"}
          </button>
          <button
            type="submit"
            // The fragment scrolls the answer to its Preview section: below a long form, out of
            // sight on a phone otherwise.
            formaction={
              webhook ? `${WEBHOOKS}/${webhook.id}/preview#preview` : `${WEBHOOKS}/preview#preview`
            }
          >
            Preview with the last change
          </button>
        </div>
      </form>
      {props.preview ? (
        <PreviewSection preview={props.preview} urlWarning={props.urlWarning} />
      ) : null}
      {props.children}
      {webhook ? (
        <>
          <h2>Delete</h2>
          <p>Deleting the webhook also deletes its deliveries and their attempts.</p>
          <PostButton
            action={`${WEBHOOKS}/${webhook.id}/delete`}
            label="Delete webhook"
            csrfToken={page.csrfToken}
            danger
          />
        </>
      ) : null}
    </Layout>
  );
}

/** The only page that ever shows a generated secret. */
export function WebhookCreatedPage(props: {
  page: PageContext;
  webhook: Webhook;
  generatedSecret: string | null;
  urlWarning?: string | null;
}) {
  const { page, webhook } = props;
  return (
    <Layout title="Webhook created" page={page}>
      <h1>Webhook {webhook.name} created</h1>
      <UrlWarning warning={props.urlWarning} />
      {props.generatedSecret ? (
        <div class="secret">
          <p>
            <strong>Secret, shown only this once:</strong> copy it now into the receiver's
            configuration (e.g. <code>bun run receiver --secret …</code>).
          </p>
          <p>
            <code id="generated-secret">{props.generatedSecret}</code>
          </p>
        </div>
      ) : (
        <p>The secret you entered is saved; it will not be shown.</p>
      )}
      <div class="actions">
        <a class="button" href={WEBHOOKS}>
          Webhooks
        </a>
        <a class="button" href={`${WEBHOOKS}/${webhook.id}`}>
          Edit {webhook.name}
        </a>
      </div>
    </Layout>
  );
}
