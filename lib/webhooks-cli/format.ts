import { escapeControl } from "../text/control.ts";
import { maskUrlPassword, maskUrlPasswords } from "../text/url-credentials.ts";
import type { Attempt, Delivery, Webhook } from "../webhooks/model.ts";
import { formatRetrySchedule } from "../webhooks/policy/retry-schedule.ts";

/**
 * A webhook for --json output: the secret itself is never listed, only whether there is one,
 * and the URL's password is masked.
 */
export function webhookJson(webhook: Webhook) {
  // Neither secret is ever printed; the old one's end of grace is (a rotation's overlap).
  const { secret, previousSecret, previousSecretUntil, retrySchedule, ...rest } = webhook;
  return {
    ...rest,
    url: maskUrlPassword(webhook.url),
    retrySchedule: formatRetrySchedule(retrySchedule),
    hasSecret: secret !== null,
    previousSecretValidUntil: previousSecret === null ? null : previousSecretUntil,
  };
}

/** A delivery for --json output, the payload parsed back into JSON, URL passwords masked. */
export function deliveryJson(delivery: Delivery, attempts?: Attempt[]) {
  return {
    ...delivery,
    url: maskedUrl(delivery.url),
    lastError: maskedText(delivery.lastError),
    payload: parseOrText(delivery.payload),
    context: delivery.context === null ? null : parseOrText(delivery.context),
    ...(attempts
      ? {
          attempts: attempts.map((a) => ({
            ...a,
            url: maskedUrl(a.url ?? null),
            error: maskedText(a.error),
          })),
        }
      : {}),
  };
}

/** A URL as shown: its password masked (lib/text/url-credentials.ts). */
export function maskedUrl(url: string | null): string | null {
  return url === null ? null : maskUrlPassword(url);
}

/** A text from a peer or the worker (an error) with any URL's password masked. */
export function maskedText(text: string | null): string | null {
  return text === null ? null : maskUrlPasswords(text);
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** Text from the database or a peer, safe for a terminal. */
export function safe(text: string | null | undefined): string {
  return text === null || text === undefined ? "" : escapeControl(text);
}

/** One line: newlines shown as ⏎ so a value cannot spread over several lines. */
export function oneLine(text: string | null | undefined): string {
  return safe(text).replace(/\n/g, "⏎");
}

export function time(ms: number | null): string {
  return ms === null ? "-" : new Date(ms).toISOString();
}

/** Left-aligned columns separated by two spaces; the last column is not padded. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((row) => [...(row[i] ?? "")].length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** `#2  <time>  500  12 ms  http_error  to https://…  HTTP 500`: where it went, when known. */
export function attemptLine(attempt: Attempt): string {
  const status = attempt.statusCode === null ? "-" : String(attempt.statusCode);
  const to = attempt.url ? `  to ${oneLine(maskUrlPassword(attempt.url))}` : "";
  const error = attempt.error ? `  ${oneLine(maskUrlPasswords(attempt.error))}` : "";
  return `#${attempt.attempt}  ${time(attempt.startedAt)}  ${status}  ${Math.round(attempt.durationMs)} ms  ${attempt.outcome}${to}${error}`;
}
