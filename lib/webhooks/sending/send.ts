import { raceAbort } from "../../async/race-abort.ts";
import { parseRetryAfter } from "../../http/backoff.ts";
import { describeNetworkError, describeProxiedError } from "../../http/network-error.ts";
import type { ProxySetting } from "../../http/proxy.ts";
import type { AllowList, InterfaceSource, Resolver } from "../../http/ssrf.ts";
import { errorMessage } from "../../text/error-message.ts";
import { timeoutMsOf, timeoutOf } from "../delivery/lease-rules.ts";
import type { AttemptRecord, Claim, Webhook } from "../model.ts";
import { type AttemptResult, isSuccess } from "../policy/retry.ts";
import { isTemplated } from "../rendering/template.ts";
import { type CheckMemory, checkAndRemember, hostOf, rememberedCheck } from "./check-memory.ts";
import { type ClientCertificate, type ClientCerts, createClientCerts } from "./client-cert.ts";
import { buildRequest, type OutgoingRequest } from "./request.ts";
import { headerLines, httpError, readBody } from "./response-record.ts";
import {
  type CaFiles,
  caFileText,
  createCaFiles,
  type TlsOptions,
  tlsOptionsFor,
} from "./tls-options.ts";

/** Response headers and body are kept up to this many bytes each. */
export const RESPONSE_LIMIT_BYTES = 4096;

export interface SendOptions {
  /** WEBHOOK_TIMEOUT_MS: the timeout of a webhook that sets none of its own. */
  timeoutMs: number;
  /**
   * The most a webhook's own timeout may be: less than the worker's lease, or another worker
   * would take the delivery over while this attempt still runs.
   */
  maxTimeoutMs?: number;
  /** The worker's CA files (createCaFiles), read for webhooks that name one. */
  caFiles?: CaFiles;
  /** The worker's client certificates (createClientCerts), read for webhooks that name one. */
  clientCerts?: ClientCerts;
  allow: AllowList;
  fetch?: typeof fetch;
  resolve?: Resolver;
  /** This machine's own addresses, refused as targets; default os.networkInterfaces(). */
  interfaces?: InterfaceSource;
  /** Wall clock (epoch ms) for `startedAt` and `webhook-timestamp`. */
  now?: () => number;
  userAgent?: string;
  /** Aborts the request when the worker shuts down hard; the send then throws. */
  signal?: AbortSignal;
  /** The worker's remembered destination checks (check-memory.ts); absent: checked every time. */
  checks?: CheckMemory;
  /**
   * WEBHOOK_PROXY_URL with WEBHOOK_NO_PROXY: requests the guard accepted go through it by host
   * name; absent or null: every request goes directly to the checked address.
   */
  proxy?: ProxySetting | null;
}

export interface SendResult extends AttemptResult {
  record: AttemptRecord;
}

/** What a worker's attempts share: SendOptions without the per-attempt cap and signal. */
export type SenderOptions = Omit<SendOptions, "maxTimeoutMs" | "signal">;

/** One attempt's own limits: the timeout's cap (the lease) and the hard-shutdown signal. */
export interface AttemptCall {
  maxTimeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * A worker's sender: sendAttempt with the options its attempts share given once, so an attempt
 * passes only its own cap and signal (the delivery path builds no options object per attempt).
 */
export function createSender(
  options: SenderOptions,
): (claim: Claim, call: AttemptCall) => Promise<SendResult> {
  return (claim, call) => attempt(claim, options, call.maxTimeoutMs, call.signal);
}

/**
 * Makes one HTTP attempt for a claim and describes how it went. Never throws for anything the
 * receiver or the network does (those are recorded attempts); throws only when `signal` aborts,
 * so the worker can give the claim back. `timeoutMs` bounds the whole attempt: resolving the
 * host for the SSRF check, the request, and reading the (capped) response.
 */
export function sendAttempt(claim: Claim, options: SendOptions): Promise<SendResult> {
  return attempt(claim, options, options.maxTimeoutMs, options.signal);
}

/** A request ready to go, or the attempt's end before any request (refused, unrenderable). */
type Prepared =
  | { url: string; init: FetchInit; proxy?: ProxySetting }
  | { refused: Partial<AttemptRecord> & Pick<AttemptRecord, "outcome">; url: string | null };
type FetchInit = RequestInit & { decompress: boolean; tls?: unknown; proxy?: string };

/**
 * One attempt. Kept small on purpose: the usual attempt (destination already checked, no CA
 * file) runs this, prepareKnown and answered, and what is rare lives in functions of its own
 * (prepareChecked, failedAttempt). Measured with JSC's compile times, the optimizing JIT spent
 * 54 ms on the single function this replaced in a 20,000-delivery run, 15 ms on this one.
 */
async function attempt(
  claim: Claim,
  options: SenderOptions,
  maxTimeoutMs: number | undefined,
  parent: AbortSignal | undefined,
): Promise<SendResult> {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const started = performance.now();
  // The URL this attempt goes to (or is refused for), recorded with it; rendered at enqueue
  // when the webhook's URL is a template.
  const url = claim.delivery.url ?? claim.webhook.url;
  const timeoutMs = timeoutMsOf(claim, { timeoutMs: options.timeoutMs, maxTimeoutMs });
  // One controller and one timer per attempt, cleared when it ends (AbortSignal.timeout would
  // live on for the whole timeout); the worker's signal reaches it through abortOnParent.
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException("The attempt timed out", "TimeoutError"));
  }, timeoutMs);
  const siblings = parent ? abortOnParent(parent, controller) : undefined;
  let requested: string | null = null;
  let proxy: ProxySetting | undefined;
  try {
    const prepared =
      prepareKnown(claim, options, url, startedAt, controller.signal) ??
      (await prepareChecked(claim, options, url, startedAt, controller.signal));
    if ("refused" in prepared) return result(startedAt, started, prepared.url, prepared.refused);
    requested = prepared.url;
    proxy = prepared.proxy;
    const response = await (options.fetch ?? fetch)(prepared.url, prepared.init);
    requested = null;
    const responseBody = await readBody(response, RESPONSE_LIMIT_BYTES);
    return answered(response, responseBody, { startedAt, started, url, now: now() });
  } catch (error) {
    if (parent?.aborted) throw parent.reason ?? error;
    const limits = { timeoutMs: options.timeoutMs, maxTimeoutMs };
    return result(
      startedAt,
      started,
      url,
      failedAttempt(error, claim, url, { timedOut, limits, requested, proxy }),
    );
  } finally {
    clearTimeout(timer);
    siblings?.delete(controller);
  }
}

/**
 * The request, when everything it needs is at hand (the usual case): the destination checked
 * before and remembered (check-memory.ts) and no CA or client certificate file to read. Null:
 * prepareChecked's turn.
 */
function prepareKnown(
  claim: Claim,
  options: SenderOptions,
  url: string,
  startedAt: number,
  signal: AbortSignal,
): Prepared | null {
  const unrendered = unrenderedTemplate(claim);
  // A delivery whose template never rendered reached for no URL.
  if (unrendered !== null)
    return { refused: { outcome: "template_error", error: unrendered }, url: null };
  const known = rememberedCheck(options.checks, url, startedAt);
  if (known === undefined || hasTlsFiles(claim.webhook)) return null;
  const { check } = known;
  if (!check.ok) return { refused: { outcome: "blocked", error: check.reason }, url };
  return prepareRequest(claim, options, { url, startedAt, signal }, known.target);
}

function hasTlsFiles(webhook: Webhook): boolean {
  return webhook.caFile != null || webhook.clientCertFile != null;
}

/**
 * The request after checking its destination (SSRF, DNS) and reading its CA file and client
 * certificate if any.
 */
async function prepareChecked(
  claim: Claim,
  options: SenderOptions,
  url: string,
  startedAt: number,
  signal: AbortSignal,
): Promise<Prepared> {
  const { allow, resolve, interfaces, checks: memory, proxy } = options;
  const { check, target } =
    rememberedCheck(memory, url, startedAt) ??
    (await raceAbort(
      checkAndRemember(url, { allow, resolve, interfaces, memory, proxy }, startedAt),
      signal,
    ));
  if (!check.ok) return { refused: { outcome: "blocked", error: check.reason }, url };
  // Only a webhook with a CA file or client certificate waits for them here (read once a
  // minute); a file that cannot be read ends the attempt as a network error (failedAttempt).
  const ca =
    claim.webhook.caFile == null
      ? undefined
      : await raceAbort(
          caFileText(claim.webhook.caFile, options.caFiles ?? createCaFiles()),
          signal,
        );
  const client =
    claim.webhook.clientCertFile == null
      ? undefined
      : await raceAbort((options.clientCerts ?? createClientCerts())(claim.webhook), signal);
  return prepareRequest(claim, options, { url, startedAt, signal }, target, { ca, client });
}

function prepareRequest(
  claim: Claim,
  options: SenderOptions,
  attempt: { url: string; startedAt: number; signal: AbortSignal },
  target: { url: string; host?: string; tls?: TlsOptions; proxy?: ProxySetting },
  files: { ca?: string; client?: ClientCertificate } = {},
): Prepared {
  const { url, startedAt } = attempt;
  let request: OutgoingRequest;
  try {
    request = buildRequest(claim.webhook, claim.delivery, Math.floor(startedAt / 1000), {
      userAgent: options.userAgent,
    });
  } catch (error) {
    const message = `Could not build the request: ${firstLineOf(error)}`;
    return { refused: { outcome: "network_error", error: message }, url };
  }
  if (target.host !== undefined) request.headers.push(["Host", target.host]);
  const init: FetchInit = {
    method: request.method,
    headers: request.headers,
    body: request.body,
    redirect: "manual",
    signal: attempt.signal,
    // No Accept-Encoding: the body is only recorded (its first 4 KiB), so it is asked for as
    // is rather than compressed by the receiver and decompressed here.
    decompress: false,
  };
  const tls = tlsOptionsFor(claim.webhook, target.tls, files.ca, files.client);
  if (tls) init.tls = tls;
  if (target.proxy === undefined) return { url: target.url, init };
  // An https destination is a CONNECT tunnel to host:port; an http one a request by full URL.
  init.proxy = target.proxy.url;
  return { url: target.url, init, proxy: target.proxy };
}

/** The record of an answer, whatever its status. */
function answered(
  response: Response,
  responseBody: string | null,
  at: { startedAt: number; started: number; url: string; now: number },
): SendResult {
  const status = response.status;
  const responseHeaders = headerLines(response.headers, RESPONSE_LIMIT_BYTES);
  if (isSuccess(status)) {
    return result(at.startedAt, at.started, at.url, {
      outcome: "success",
      statusCode: status,
      responseHeaders,
      responseBody,
    });
  }
  return result(at.startedAt, at.started, at.url, {
    outcome: "http_error",
    statusCode: status,
    error: httpError(response),
    responseHeaders,
    responseBody,
    retryAfterMs: parseRetryAfter(response.headers.get("retry-after"), at.now),
  });
}

/**
 * An attempt that threw before an answer: timed out (its own timer), a request that failed
 * (named by address and host: Bun's own message names neither), or anything else on the way
 * (a DNS lookup, a CA file), by the first line of its message.
 */
function failedAttempt(
  error: unknown,
  claim: Claim,
  url: string,
  how: {
    timedOut: boolean;
    limits: { timeoutMs: number; maxTimeoutMs?: number };
    /** The URL a request was being made to when it failed; null before or after. */
    requested: string | null;
    /** The proxy it went through, named (password masked) in the error. */
    proxy?: ProxySetting;
  },
): Partial<AttemptRecord> & Pick<AttemptRecord, "outcome"> {
  if (how.timedOut) {
    const timeout = timeoutOf(claim, how.limits);
    return { outcome: "timeout", error: `Timed out after ${timeout.ms} ms (${timeout.source})` };
  }
  if (how.requested !== null) {
    return {
      outcome: "network_error",
      error: how.proxy
        ? describeProxiedError(error, how.requested, how.proxy.shown)
        : describeNetworkError(error, how.requested, hostOf(url)),
    };
  }
  return { outcome: "network_error", error: firstLineOf(error) };
}

/**
 * A delivery queued before its webhook's URL or a header became a template has nothing rendered
 * for it: sending the template text itself would go to a wrong address or say the wrong thing.
 */
function unrenderedTemplate({ webhook, delivery }: Claim): string | null {
  const marks = templateMarksOf(webhook);
  if (marks.url && delivery.url === null) {
    return "The webhook's URL became a template after this delivery was queued: nothing was rendered for it";
  }
  if (marks.header && delivery.headers === null) {
    return "A header of the webhook became a template after this delivery was queued: nothing was rendered for it";
  }
  return null;
}

/** Webhooks are immutable values, so whether one's URL or a header is a template is kept with it. */
const templateMarks = new WeakMap<Webhook, { url: boolean; header: boolean }>();

function templateMarksOf(webhook: Webhook): { url: boolean; header: boolean } {
  let marks = templateMarks.get(webhook);
  if (!marks) {
    marks = {
      url: isTemplated(webhook.url),
      header: webhook.headers.some(([, value]) => isTemplated(value)),
    };
    templateMarks.set(webhook, marks);
  }
  return marks;
}

const abortables = new WeakMap<AbortSignal, Set<AbortController>>();

/**
 * Aborts `controller` when `parent` (the worker's hard-shutdown signal) aborts, through one
 * listener per parent for all attempts instead of one each. Returns the set the controller was
 * added to: deleting it from there unlinks it.
 */
function abortOnParent(parent: AbortSignal, controller: AbortController): Set<AbortController> {
  if (parent.aborted) controller.abort(parent.reason);
  let siblings = abortables.get(parent);
  if (!siblings) {
    const set = new Set<AbortController>();
    abortables.set(parent, set);
    parent.addEventListener(
      "abort",
      () => {
        for (const each of set) each.abort(parent.reason);
      },
      { once: true },
    );
    siblings = set;
  }
  siblings.add(controller);
  return siblings;
}

function result(
  startedAt: number,
  started: number,
  url: string | null,
  fields: Partial<AttemptRecord> & Pick<AttemptRecord, "outcome"> & { retryAfterMs?: number },
): SendResult {
  const record: AttemptRecord = {
    startedAt,
    durationMs: Math.round((performance.now() - started) * 1000) / 1000,
    statusCode: fields.statusCode ?? null,
    outcome: fields.outcome,
    error: fields.error ?? null,
    responseHeaders: fields.responseHeaders ?? null,
    responseBody: fields.responseBody ?? null,
    url,
  };
  return {
    record,
    outcome: record.outcome,
    statusCode: record.statusCode,
    retryAfterMs: fields.retryAfterMs,
  };
}

/** The first line of a thrown message: attempt records and logs hold one line. */
function firstLineOf(error: unknown): string {
  const message = errorMessage(error);
  return message.split("\n")[0] ?? message;
}
