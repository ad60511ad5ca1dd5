/** @jsxImportSource hono/jsx */
import { maskUrlPassword } from "../../../text/url-credentials.ts";
import type { EvaluatedCondition } from "../../../webhooks/rendering/conditions.ts";
import { UrlWarning } from "./url-warning.tsx";
import type { WebhookPreview } from "./webhook-preview.ts";

/** What the form's templates and conditions make of the last change, shown under the form. */
export function PreviewSection(props: { preview: WebhookPreview; urlWarning?: string | null }) {
  const { preview } = props;
  return (
    <section id="preview">
      <h2>Preview</h2>
      <p class="muted">{preview.source}</p>
      {preview.matches === null ? null : (
        <p>
          Conditions:{" "}
          {preview.matches
            ? "this change matches, a delivery would be queued."
            : "this change does not match, nothing would be queued."}
        </p>
      )}
      {preview.evaluation.length > 0 ? <ConditionTable rows={preview.evaluation} /> : null}
      {preview.error !== null ? (
        <p class="error-box" role="alert">
          {preview.error}
        </p>
      ) : (
        <>
          <p>
            <code>{maskUrlPassword(preview.url)}</code>
          </p>
          <UrlWarning warning={props.urlWarning} />
          {preview.headers.length > 0 ? (
            <pre>{preview.headers.map(([name, value]) => `${name}: ${value}`).join("\n")}</pre>
          ) : null}
          <pre class="wrap">{preview.body}</pre>
        </>
      )}
    </section>
  );
}

/** Each condition beside the value it saw in the previewed change ("absent": no such attribute). */
function ConditionTable(props: { rows: EvaluatedCondition[] }) {
  return (
    <table class="conditions">
      <thead>
        <tr>
          <th>condition</th>
          <th>attribute</th>
          <th>in this change</th>
          <th>test</th>
          <th>result</th>
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr>
            <td>
              <code>{row.path}</code>
            </td>
            <td>
              <code>{row.condition.attr}</code>
            </td>
            <td>{row.found ? <code>{JSON.stringify(row.actual) ?? "null"}</code> : "absent"}</td>
            <td>
              <code>
                {row.condition.negate ? "not " : ""}
                {row.condition.op ?? "eq"} {JSON.stringify(row.condition.value)}
              </code>
            </td>
            <td>{row.result ? "true" : "false"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
