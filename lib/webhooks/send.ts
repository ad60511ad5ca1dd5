import { parseRetryAfter } from "../http/backoff.ts";
import { buildRequest } from "./request.ts";
import { type AttemptResult, isSuccess } from "./retry.ts";
import { type AllowList, checkDestination, type DestinationCheck, type Resolver } from "./ssrf.ts";
import type { AttemptRecord, Claim } from "./types.ts";

/** Response headers and body are kept up to this many bytes each. */
export const RESPONSE_LIMIT_BYTES = 4096;

export interface SendOptions {
  timeoutMs: number;
  allow: AllowList;
  fetch?: typeof fetch;
  resolve?: Resolver;
  /** Wall clock (epoch ms) for `startedAt` and `webhook-timestamp`. */
  now?: () => number;
  userAgent?: string;
  /** Aborts the request when the worker shuts down hard; the send then throws. */
  signal?: AbortSignal;
  /**
   * Remembers the check of URLs whose host is an IP literal (the answer cannot change; names
   * are resolved again on every attempt). One per worker, for the same `allow`.
   */
  literalChecks?: Map<string, DestinationCheck>;
}

const LITERAL_HOST = /^(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\])$/i;
const MAX_REMEMBERED = 1000;

async function checkOnce(url: string, options: SendOptions): Promise<DestinationCheck> {
  const cache = options.literalChecks;
  const known = cache?.get(url);
  if (known) return known;
  const check = await checkDestination(url, { allow: options.allow, resolve: options.resolve });
  if (cache && cache.size < MAX_REMEMBERED && LITERAL_HOST.test(hostOf(url))) cache.set(url, check);
  return check;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}

export interface SendResult extends AttemptResult {
  record: AttemptRecord;
}

/**
 * Makes one HTTP attempt for a claim and describes how it went. Never throws for anything the
 * receiver or the network does (those are recorded attempts); throws only when `signal` aborts,
 * so the worker can give the claim back.
 */
export async function sendAttempt(claim: Claim, options: SendOptions): Promise<SendResult> {
  const now = options.now ?? Date.now;
  const fetchFn = options.fetch ?? fetch;
  const startedAt = now();
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;

  const destination = await checkOnce(claim.webhook.url, options);
  if (!destination.ok) {
    return result(startedAt, elapsed(), { outcome: "blocked", error: destination.reason });
  }

  let request: ReturnType<typeof buildRequest>;
  try {
    request = buildRequest(claim.webhook, claim.delivery, Math.floor(startedAt / 1000), {
      userAgent: options.userAgent,
    });
  } catch (error) {
    return result(startedAt, elapsed(), {
      outcome: "network_error",
      error: `Could not build the request: ${messageOf(error)}`,
    });
  }

  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  try {
    const response = await fetchFn(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      redirect: "manual",
      keepalive: true,
      signal,
    });
    const responseBody = await readLimited(response, RESPONSE_LIMIT_BYTES);
    const status = response.status;
    const success = isSuccess(status);
    return result(startedAt, elapsed(), {
      outcome: success ? "success" : "http_error",
      statusCode: status,
      error: success ? null : httpError(response),
      responseHeaders: cut(headerLines(response.headers), RESPONSE_LIMIT_BYTES),
      responseBody,
      retryAfterMs: parseRetryAfter(response.headers.get("retry-after"), now()),
    });
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason ?? error;
    if (timeout.aborted) {
      return result(startedAt, elapsed(), {
        outcome: "timeout",
        error: `Timed out after ${options.timeoutMs} ms (WEBHOOK_TIMEOUT_MS)`,
      });
    }
    return result(startedAt, elapsed(), { outcome: "network_error", error: messageOf(error) });
  }
}

function result(
  startedAt: number,
  durationMs: number,
  fields: Partial<AttemptRecord> & Pick<AttemptRecord, "outcome"> & { retryAfterMs?: number },
): SendResult {
  const record: AttemptRecord = {
    startedAt,
    durationMs,
    statusCode: fields.statusCode ?? null,
    outcome: fields.outcome,
    error: fields.error ?? null,
    responseHeaders: fields.responseHeaders ?? null,
    responseBody: fields.responseBody ?? null,
  };
  return {
    record,
    outcome: record.outcome,
    statusCode: record.statusCode,
    retryAfterMs: fields.retryAfterMs,
  };
}

function httpError(response: Response): string {
  const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
  if (response.status >= 300 && response.status <= 399) {
    const location = response.headers.get("location");
    return `${status}: redirects are not followed${location ? ` (Location: ${cut(location, 512)})` : ""}`;
  }
  return status;
}

/**
 * Reads at most `limit` bytes of the body, then cancels the rest (a huge body costs nothing).
 * The status already arrived, so a body that breaks off (reset, timeout) keeps what was read.
 */
async function readLimited(response: Response, limit: number): Promise<string | null> {
  if (!response.body) return null;
  const announced = Number(response.headers.get("content-length") ?? Number.NaN);
  if (announced <= limit) {
    // Small and announced (the usual answer): one read, no stream machinery.
    try {
      return decodeCut(new Uint8Array(await response.arrayBuffer()).subarray(0, limit));
    } catch {
      return "";
    }
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
    if (size >= limit) await reader.cancel();
  } catch {
    await reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(Math.min(size, limit));
  let offset = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, bytes.length - offset);
    bytes.set(part, offset);
    offset += part.byteLength;
    if (offset >= bytes.length) break;
  }
  return decodeCut(bytes);
}

function headerLines(headers: Headers): string {
  return [...headers].map(([name, value]) => `${name}: ${value}`).join("\n");
}

/** `text` cut to at most `limit` UTF-8 bytes. */
function cut(text: string, limit: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.byteLength <= limit) return text;
  return decodeCut(bytes.subarray(0, limit));
}

/** UTF-8 text of bytes that may end inside a character: `stream` drops the partial tail. */
function decodeCut(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes, { stream: true });
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0] ?? message;
}
