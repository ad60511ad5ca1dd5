/** @jsxImportSource hono/jsx */

import { DEFAULT_GRACE_SECONDS } from "../../../webhooks/definition/rotation.ts";
import type { Webhook } from "../../../webhooks/model.ts";
import { formatTime } from "../format.ts";
import { CsrfField, FieldErrors, Layout, type PageContext } from "../layout.tsx";

const WEBHOOKS = "/admin/webhooks";

/**
 * Rotate secret on a webhook's page: a new secret, the current one signing beside it for the
 * grace period (lib/webhooks/definition/rotation.ts), as `webhooks update --rotate-secret` and the API.
 */
export function RotateSecretForm(props: {
  page: PageContext;
  webhook: Webhook;
  grace?: string;
  errors?: string[];
  nowMs: number;
}) {
  const { webhook } = props;
  if (webhook.secret === null) return null;
  const until = webhook.previousSecret === null ? null : webhook.previousSecretUntil;
  return (
    <section>
      <h2>Rotate secret</h2>
      <p class="muted">
        A new secret, shown once. Meanwhile requests carry a signature with each secret
        (webhook-signature: v1,new v1,old), so receivers can switch at any time within the grace.
      </p>
      {until !== null && until > props.nowMs ? (
        <p>The previous secret signs too until {formatTime(until)}.</p>
      ) : null}
      <form method="post" action={`${WEBHOOKS}/${webhook.id}/rotate-secret`} class="stacked">
        <CsrfField token={props.page.csrfToken} />
        <label>
          Grace period (seconds)
          <span class="hint">How long the current secret keeps signing; 0 for none.</span>
          <input
            type="text"
            name="graceSeconds"
            inputmode="numeric"
            value={props.grace ?? String(DEFAULT_GRACE_SECONDS)}
          />
          <FieldErrors messages={props.errors} />
        </label>
        <button type="submit">Rotate secret</button>
      </form>
    </section>
  );
}

/** The one page that shows a rotated secret. */
export function SecretRotatedPage(props: {
  page: PageContext;
  webhook: Webhook;
  secret: string;
  previousValidUntil: number | null;
}) {
  const { webhook } = props;
  return (
    <Layout title="Secret rotated" page={props.page}>
      <h1>New secret for {webhook.name}</h1>
      <div class="secret">
        <p>
          <strong>Secret, shown only this once:</strong> copy it now into the receiver's
          configuration (e.g. <code>RECEIVER_SECRET=new,old bun run receiver</code>).
        </p>
        <p>
          <code id="generated-secret">{props.secret}</code>
        </p>
      </div>
      <p>
        {props.previousValidUntil === null
          ? "The previous secret no longer signs."
          : `The previous secret signs too until ${formatTime(props.previousValidUntil)}.`}
      </p>
      <div class="actions">
        <a class="button" href={`${WEBHOOKS}/${webhook.id}`}>
          Back to {webhook.name}
        </a>
      </div>
    </Layout>
  );
}
