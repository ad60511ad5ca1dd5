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

type Read<T> = T | { problem: string };

function problem(text: string): { problem: string } {
  return { problem: text };
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

function readState(value: unknown): Read<DeliveryState> {
  return typeof value === "string" && (DELIVERY_STATES as readonly string[]).includes(value)
    ? (value as DeliveryState)
    : problem(`must be one of ${DELIVERY_STATES.join(", ")}`);
}

/** A list of states: a JSON array, or comma-separated text. */
function readStates(value: unknown): Read<DeliveryState[]> {
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

function readText(value: unknown): Read<string> {
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
  const filter: DeliverySearch = {};
  const take = <T>(name: string, read: Read<T>, set: (value: T) => void) => {
    if (typeof read === "object" && read !== null && "problem" in read)
      problems[name] = read.problem;
    else set(read as T);
  };
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined || options.ignore?.includes(name)) continue;
    if (!(allowed as readonly string[]).includes(name)) {
      problems[name] = "unknown field";
      continue;
    }
    switch (name as FilterField) {
      case "webhook":
        take(name, readId(value), (id) => (filter.webhookId = id));
        break;
      case "message_id":
        take(name, readText(value), (id) => (filter.messageId = id));
        break;
      case "state":
        take(name, readState(value), (state) => (filter.states = [state]));
        break;
      case "states":
        take(name, readStates(value), (states) => (filter.states = states));
        break;
      case "event":
        take(name, readText(value), (event) => (filter.event = event));
        break;
      case "object_model":
        take(name, readText(value), (model) => (filter.objectModel = model));
        break;
      case "object_id":
        take(name, readId(value), (id) => (filter.objectId = id));
        break;
      case "since":
        take(name, readTime(value), (ms) => (filter.since = ms));
        break;
      case "until":
        take(name, readTime(value), (ms) => (filter.until = ms));
        break;
    }
  }
  if (filter.since !== undefined && filter.until !== undefined && filter.until <= filter.since) {
    problems.until ??= "must be after since";
  }
  if ("state" in given && "states" in given && given.state !== undefined) {
    problems.states ??= "give either state or states, not both";
  }
  return Object.keys(problems).length === 0 ? { ok: true, filter } : { ok: false, problems };
}
