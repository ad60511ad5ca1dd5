import { ALL_EVENTS, ITEM_EVENTS, OPERATIONAL_EVENTS } from "../model.ts";

/**
 * Whether a webhook subscribed to `events` gets `event`. "*" matches every item event, never
 * "ping" nor an operational event (a webhook gets those only by naming them, so no existing "*"
 * webhook starts receiving them).
 */
export function subscribes(events: readonly string[], event: string): boolean {
  if (event === "ping") return false;
  if (events.includes(event)) return true;
  return events.includes(ALL_EVENTS) && (ITEM_EVENTS as readonly string[]).includes(event);
}

/** The names a webhook may subscribe to, for messages and forms. */
export const SUBSCRIBABLE_EVENTS: readonly string[] = [
  ...ITEM_EVENTS,
  ...OPERATIONAL_EVENTS,
  ALL_EVENTS,
];

export function isSubscribableEvent(name: string): boolean {
  return SUBSCRIBABLE_EVENTS.includes(name);
}

export function isOperationalEvent(name: string): boolean {
  return (OPERATIONAL_EVENTS as readonly string[]).includes(name);
}
