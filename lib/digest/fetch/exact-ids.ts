/**
 * Hacker News ids kept exactly. Ids are past 2^25 today, but nothing stops one past 2^53, where
 * a JavaScript number rounds to a neighbouring id: there an id is kept as its decimal digits.
 */
import type { ItemId } from "../types.ts";

/** An id as the API or a file gives it (digits, or a number) → a number while safe, else its digits. */
export function itemId(value: string | number): ItemId {
  const text = String(value).replace(/^0+(?=\d)/, "");
  const number = Number(text);
  return Number.isSafeInteger(number) ? number : text;
}

/**
 * JSON.parse, but an integer beyond 2^53 (an `objectID`-like `parent_id` or `story_id`, or an
 * `id` in an archived day) is kept as its digits rather than rounded to a neighbouring id.
 */
export function parseJsonExactly(text: string): unknown {
  return JSON.parse(text, (_key, value, context?: { source?: string }) =>
    typeof value === "number" &&
    !Number.isSafeInteger(value) &&
    context?.source !== undefined &&
    /^\d+$/.test(context.source)
      ? context.source
      : value,
  );
}
