/** @jsxImportSource hono/jsx */
/**
 * The warning beside a webhook's URL when workers will refuse it (lib/webhooks/sending/url-refusal.ts):
 * shown on the form, its preview and the page after creating, so the refusal is seen before the
 * first attempt instead of in every attempt's error.
 */
export function UrlWarning(props: { warning: string | null | undefined }) {
  if (!props.warning) return null;
  return (
    <p class="url-warning" role="status">
      <strong>Warning:</strong> {props.warning}
    </p>
  );
}
