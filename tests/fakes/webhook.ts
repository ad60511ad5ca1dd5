import type { FanOutCandidate } from "../../lib/webhooks/events/fan-out.ts";
import type { Webhook } from "../../lib/webhooks/model.ts";

/** The Standard Webhooks spec's test-vector secret. */
export const SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** A webhook value as the store would return it, for tests of code that only reads one. */
export function webhookFixture(overrides: Partial<Webhook> = {}): Webhook {
  return {
    id: 1,
    name: "hook",
    url: "https://hooks.example/in",
    method: "POST",
    contentType: "application/json",
    headers: [],
    secret: SPEC_SECRET,
    previousSecret: null,
    previousSecretUntil: null,
    events: ["*"],
    enabled: true,
    disabledReason: null,
    disabledAt: null,
    maxPerSecond: null,
    bodyTemplate: null,
    conditions: null,
    sslVerification: true,
    caFile: null,
    clientCertFile: null,
    clientKeyFile: null,
    timeoutMs: null,
    ordered: false,
    retrySchedule: "day",
    failingNoticeAfter: 4,
    createdAt: 0,
    updatedAt: 0,
    ...overrides,
  };
}

/** Webhook `id` as fan-out reads it: every event, its own URL, a body template or none. */
export function fanOutCandidate(id: number, bodyTemplate: string | null): FanOutCandidate {
  return {
    id,
    events: ["*"],
    url: `https://hooks.example/${id}`,
    headers: [],
    bodyTemplate,
    conditions: null,
  };
}
