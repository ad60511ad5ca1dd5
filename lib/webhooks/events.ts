import { ALL_EVENTS, ITEM_EVENTS } from "./model.ts";

/** Whether a webhook subscribed to `events` gets `event`. "*" matches every item event, never "ping". */
export function subscribes(events: readonly string[], event: string): boolean {
  if (event === "ping") return false;
  return events.includes(event) || events.includes(ALL_EVENTS);
}

/** The names a webhook may subscribe to, for messages and forms. */
export const SUBSCRIBABLE_EVENTS: readonly string[] = [...ITEM_EVENTS, ALL_EVENTS];

export function isSubscribableEvent(name: string): boolean {
  return SUBSCRIBABLE_EVENTS.includes(name);
}
