import { invisibleCharacter } from "../../text/control.ts";
import { DELIVERY_STATES, type DeliverySearch, type DeliveryState } from "../model.ts";

/**
 * The operator's filter of deliveries, read once for the API's query strings and JSON bodies
 * and the CLI's flags: each field from a string (a query, a flag) or its JSON value, to a
 * DeliverySearch or a problem per field. Times are ISO 8601 (UTC or with an offset); `until` is
 * exclusive.
 */

export const FILTER_FIELDS = [
  "webhook",
  "message_id",
  "state",
  "states",
  "event",
  "object_model",
  "object_id",
  "since",
  "until",
] as const;
export type FilterField = (typeof FILTER_FIELDS)[number];

export type ReadFilter =
  | { ok: true; filter: DeliverySearch }
  | { ok: false; problems: Record<string, string> };

const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
const MAX_TEXT = 200;

export type Read<T> = T | { problem: string };

function problem(text: string): { problem: string } {
  return { problem: text };
}

/** Whether a reader refused its value (and why). */
export function isProblem<T>(read: Read<T>): read is { problem: string } {
  return typeof read === "object" && read !== null && "problem" in read;
}

/** A positive whole number, as JSON or text. */
export function readId(value: unknown): Read<number> {
  const text = typeof value === "number" ? String(value) : value;
  if (typeof text !== "string" || !/^[1-9]\d{0,15}$/.test(text.trim())) {
    return problem("must be a positive whole number");
  }
  const id = Number(text.trim());
  return Number.isSafeInteger(id) ? id : problem("must be a positive whole number");
}

export function readState(value: unknown): Read<DeliveryState> {
  return typeof value === "string" && (DELIVERY_STATES as readonly string[]).includes(value)
    ? (value as DeliveryState)
    : problem(`must be one of ${DELIVERY_STATES.join(", ")}`);
}

/** A list of states: a JSON array, or comma-separated text. */
export function readStates(value: unknown): Read<DeliveryState[]> {
  const list = typeof value === "string" ? value.split(",").map((s) => s.trim()) : value;
  if (!Array.isArray(list) || list.length === 0) {
    return problem(`must be a non-empty list of ${DELIVERY_STATES.join(", ")}`);
  }
  const states: DeliveryState[] = [];
  for (const item of list) {
    const state = readState(item);
    if (typeof state === "object") return state;
    if (!states.includes(state)) states.push(state);
  }
  return states;
}

export function readText(value: unknown): Read<string> {
  if (typeof value !== "string" || value.trim() === "")
    return problem("must be a non-empty string");
  if (value.length > MAX_TEXT) return problem(`must be at most ${MAX_TEXT} characters`);
  if (invisibleCharacter(value) !== null) {
    return problem("must not contain control or invisible characters");
  }
  return value.trim();
}

/** An ISO 8601 date and time with its zone (2026-11-27T21:00:00Z), as epoch ms. */
export function readTime(value: unknown): Read<number> {
  const ms = typeof value === "string" && ISO_DATETIME.test(value.trim()) ? Date.parse(value) : NaN;
  return Number.isFinite(ms)
    ? ms
    : problem("must be an ISO 8601 date and time with its zone, e.g. 2026-11-27T21:00:00Z");
}

/**
 * The filter fields of `given` (undefined values are absent); any other field is a problem
 * unless listed in `ignore` (the caller's own: limit, offset, ids).
 */
export function readDeliveryFilter(
  given: Record<string, unknown>,
  options: { allowed?: readonly FilterField[]; ignore?: readonly string[] } = {},
): ReadFilter {
  const allowed = options.allowed ?? FILTER_FIELDS;
  const problems: Record<string, string> = {};
  const values: FilterValues = {};
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined || options.ignore?.includes(name)) continue;
    if (!(allowed as readonly string[]).includes(name)) {
      problems[name] = "unknown field";
      continue;
    }
    const read = FIELD_READERS[name as FilterField](value);
    if (isProblem(read)) problems[name] = read.problem;
    else (values as Record<string, unknown>)[name] = read;
  }
  for (const [name, text] of Object.entries(filterCrossProblems(values))) problems[name] ??= text;
  return Object.keys(problems).length === 0
    ? { ok: true, filter: searchOf(values) }
    : { ok: false, problems };
}

/** Each filter field's reader: the one definition of what it takes (the API's query uses them too). */
export const FIELD_READERS = {
  webhook: readId,
  message_id: readText,
  state: readState,
  states: readStates,
  event: readText,
  object_model: readText,
  object_id: readId,
  since: readTime,
  until: readTime,
} as const satisfies Record<FilterField, (value: unknown) => Read<unknown>>;

/** The filter's fields as read, before they become a DeliverySearch. */
export interface FilterValues {
  webhook?: number;
  message_id?: string;
  state?: DeliveryState;
  states?: DeliveryState[];
  event?: string;
  object_model?: string;
  object_id?: number;
  since?: number;
  until?: number;
}

/** What the fields cannot be together: `until` not after `since`; both `state` and `states`. */
export function filterCrossProblems(values: FilterValues): Record<string, string> {
  const problems: Record<string, string> = {};
  if (values.since !== undefined && values.until !== undefined && values.until <= values.since) {
    problems.until = "must be after since";
  }
  if (values.state !== undefined && values.states !== undefined) {
    problems.states = "give either state or states, not both";
  }
  return problems;
}

/** The fields as read, as the store's search. */
export function searchOf(values: FilterValues): DeliverySearch {
  const search: DeliverySearch = {};
  if (values.webhook !== undefined) search.webhookId = values.webhook;
  if (values.message_id !== undefined) search.messageId = values.message_id;
  if (values.state !== undefined) search.states = [values.state];
  if (values.states !== undefined) search.states = values.states;
  if (values.event !== undefined) search.event = values.event;
  if (values.object_model !== undefined) search.objectModel = values.object_model;
  if (values.object_id !== undefined) search.objectId = values.object_id;
  if (values.since !== undefined) search.since = values.since;
  if (values.until !== undefined) search.until = values.until;
  return search;
}
