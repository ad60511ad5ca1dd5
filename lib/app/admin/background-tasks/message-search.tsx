/** @jsxImportSource hono/jsx */

/**
 * Find a delivery by the `webhook-id` header a receiver logged: a GET form to the delivery
 * listing (`action`), so the address can be shared.
 */
export function MessageSearch(props: { action: string; value: string }) {
  return (
    <form class="search" method="get" action={props.action}>
      <label for="message-id">Find by webhook-id</label>
      <input
        id="message-id"
        name="message_id"
        type="search"
        value={props.value}
        placeholder="msg_…"
        maxlength={200}
        required
      />
      <button type="submit">Find</button>
    </form>
  );
}
