/** @jsxImportSource hono/jsx */
import { readDeliveryFilter } from "../../../webhooks/delivery/delivery-filter.ts";
import { MAX_REPLAY } from "../../../webhooks/delivery/replay.ts";
import type { DeliverySearch } from "../../../webhooks/model.ts";
import { CsrfField, FieldErrors, type PageContext } from "../layout.tsx";

/** The Replay form as typed, to show it again with its errors. */
export interface ReplayFormValues {
  since: string;
  until: string;
  successful: boolean;
  failed: boolean;
}

export const EMPTY_REPLAY_FORM: ReplayFormValues = {
  since: "",
  until: "",
  successful: true,
  failed: true,
};

/** A browser's datetime-local value has no zone: the admin shows UTC, so it is read as UTC. */
function withZone(text: string): string {
  const trimmed = text.trim();
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(trimmed) ? `${trimmed}Z` : trimmed;
}

export function readReplayForm(body: Record<string, unknown>): ReplayFormValues {
  const text = (key: string) => (typeof body[key] === "string" ? (body[key] as string) : "");
  return {
    since: text("since"),
    until: text("until"),
    successful: text("successful") === "on",
    failed: text("failed") === "on",
  };
}

/** The form read by the API's filter rules (lib/webhooks/delivery/delivery-filter.ts), for one webhook. */
export function parseReplayForm(
  values: ReplayFormValues,
  webhookId: number,
): { ok: true; filter: DeliverySearch } | { ok: false; errors: Record<string, string[]> } {
  const states = [
    ...(values.successful ? ["successful"] : []),
    ...(values.failed ? ["failed"] : []),
  ];
  if (states.length === 0) {
    return { ok: false, errors: { states: ["Tick successful, failed or both"] } };
  }
  const read = readDeliveryFilter({
    since: values.since.trim() === "" ? undefined : withZone(values.since),
    until: values.until.trim() === "" ? undefined : withZone(values.until),
    states,
  });
  if (!read.ok) {
    const errors = Object.fromEntries(
      Object.entries(read.problems).map(([name, problem]) => [
        name,
        [problem.charAt(0).toUpperCase() + problem.slice(1)],
      ]),
    );
    return { ok: false, errors };
  }
  return { ok: true, filter: { ...read.filter, webhookId } };
}

/** Replay on a webhook's page: its ended deliveries queued in a time range, sent again. */
export function ReplayForm(props: {
  page: PageContext;
  action: string;
  values: ReplayFormValues;
  errors?: Record<string, string[]>;
}) {
  const { values, errors = {} } = props;
  return (
    <section>
      <h2>Replay</h2>
      <p class="muted">
        Sends this webhook's deliveries that ended again, successful ones included: the same
        webhook-id and body, as a new attempt. Times are UTC, by when the change was queued; leave
        both empty for all of them. At most {MAX_REPLAY.toLocaleString("en")} at a time, the oldest
        first.
      </p>
      <form method="post" action={props.action} class="stacked">
        <CsrfField token={props.page.csrfToken} />
        <label>
          Queued from (UTC)
          <input type="datetime-local" name="since" step="1" value={values.since} />
          <FieldErrors messages={errors.since} />
        </label>
        <label>
          Until, not included (UTC)
          <input type="datetime-local" name="until" step="1" value={values.until} />
          <FieldErrors messages={errors.until} />
        </label>
        <fieldset>
          <legend>States</legend>
          <label>
            <input type="checkbox" name="successful" checked={values.successful} /> successful
          </label>
          <label>
            <input type="checkbox" name="failed" checked={values.failed} /> failed
          </label>
          <FieldErrors messages={errors.states} />
        </fieldset>
        <button type="submit">Replay</button>
      </form>
    </section>
  );
}
