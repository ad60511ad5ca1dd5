import { subscribes } from "./events.ts";

/**
 * The webhooks that get a change, from the enabled candidates the store read: those subscribed
 * to the event, or, when the change is meant for one webhook (`only`, "Send test"), that one, a
 * ping included. Ids come back ascending, as the deliveries are inserted.
 */
export function receivers<T extends { id: number; events: readonly string[] }>(
  candidates: readonly T[],
  event: string,
  options: { only?: number } = {},
): number[] {
  const ids: number[] = [];
  for (const candidate of candidates) {
    if (options.only !== undefined && candidate.id !== options.only) continue;
    const wanted =
      event === "ping" ? options.only !== undefined : subscribes(candidate.events, event);
    if (wanted) ids.push(candidate.id);
  }
  return ids.sort((a, b) => a - b);
}
