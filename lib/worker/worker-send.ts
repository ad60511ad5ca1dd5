import { abortableSleep, type Sleep } from "../async/sleep.ts";
import { createCachedResolver } from "../http/dns-cache.ts";
import { type Resolver, resolveAll } from "../http/ssrf.ts";
import type { LeaseLimits } from "../webhooks/delivery/lease-rules.ts";
import { createClaimSender } from "../webhooks/delivery/send-claim.ts";
import type { Claim, RenderedDelivery, Webhook } from "../webhooks/model.ts";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "../webhooks/policy/retry.ts";
import { renderBeforeSend } from "../webhooks/rendering/render-at-send.ts";
import {
  type RenderTemplates,
  workerTemplateRenderer,
} from "../webhooks/rendering/render-process.ts";
import { createClientCerts } from "../webhooks/sending/client-cert.ts";
import { createSender } from "../webhooks/sending/send.ts";
import { createCaFiles } from "../webhooks/sending/tls-options.ts";
import type { WorkerConfig } from "./config.ts";

type SendConfig = Pick<
  WorkerConfig,
  "timeoutMs" | "maxAttempts" | "allowList" | "retryBaseMs" | "retryMaxMs" | "proxy"
>;

export function retryPolicyOf(
  config: Omit<SendConfig, "timeoutMs" | "allowList" | "proxy">,
): RetryPolicy {
  return {
    ...DEFAULT_RETRY_POLICY,
    maxAttempts: config.maxAttempts,
    baseMs: config.retryBaseMs,
    maxMs: config.retryMaxMs,
  };
}

/**
 * The loop's `send` as a worker makes it: the retry policy from the config, send slots waited
 * for with `sleep`, and the HTTP attempt behind the SSRF guard with its DNS cache and CA files.
 */
export function createWorkerSend(options: {
  config: SendConfig;
  limits: LeaseLimits;
  now: () => number;
  random?: () => number;
  sleep?: Sleep;
  fetch?: typeof fetch;
  resolve?: Resolver;
  /** Keeps what was rendered for a delivery left to render, before its send (the store's). */
  keepRendered(claim: Claim, rendered: RenderedDelivery): Promise<boolean>;
  /** The webhook as it is now, read again after such a render (the store's). */
  webhook(id: number): Promise<Webhook | null>;
  /** Renders such deliveries (default: this process's worker renderer, started on demand). */
  render?: RenderTemplates;
}): ReturnType<typeof createClaimSender> {
  const { config, now } = options;
  return createClaimSender({
    limits: options.limits,
    policies: { retry: retryPolicyOf(config) },
    sleep: options.sleep ?? abortableSleep,
    now,
    random: options.random,
    attempt: renderBeforeSend(
      createSender({
        timeoutMs: config.timeoutMs,
        caFiles: createCaFiles(),
        clientCerts: createClientCerts(),
        allow: config.allowList,
        fetch: options.fetch,
        // One lookup per host and 30 s, not one per attempt (dns-cache.ts).
        resolve: createCachedResolver(options.resolve ?? resolveAll, { now }),
        now,
        checks: new Map(),
        proxy: config.proxy,
      }),
      {
        render: options.render ?? ((...args) => workerTemplateRenderer().render(...args)),
        keep: options.keepRendered,
        webhook: options.webhook,
        now,
      },
    ),
  });
}
