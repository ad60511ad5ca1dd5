import { describe, expect, test } from "bun:test";
import {
  createFreshness,
  LEASE_MARGIN_MS,
  leaseLeft,
  mayStillSend,
  requestCapMs,
  startNeedMs,
  timeoutOf,
  WEBHOOK_FRESH_MS,
} from "../../../lib/webhooks/delivery/lease-rules.ts";
import type { Claim, Webhook } from "../../../lib/webhooks/model.ts";
import { claimFixture } from "../../fakes/claim.ts";

/** A claim on delivery 1 whose lease runs out at `leaseExpiresAt`. */
function claim(
  options: { leaseExpiresAt?: number | null; notBefore?: number; webhook?: Partial<Webhook> } = {},
): Claim {
  const { leaseExpiresAt = null, notBefore, webhook } = options;
  return claimFixture({ webhook, notBefore, delivery: { leaseExpiresAt } });
}

/** WEBHOOK_TIMEOUT_MS 10 s, WEBHOOK_LEASE_MS 60 s (the worker's defaults' shape). */
const LIMITS = { timeoutMs: 10_000, leaseMs: 60_000 };

describe("timeoutOf()", () => {
  const cases: Array<[string, number | null, number | undefined, number, string]> = [
    ["no timeout of its own: WEBHOOK_TIMEOUT_MS", null, undefined, 10_000, "WEBHOOK_TIMEOUT_MS"],
    ["its own timeout", 3000, undefined, 3000, "the webhook's timeout"],
    ["its own timeout under the cap", 3000, 5000, 3000, "the webhook's timeout"],
    [
      "its own timeout over the cap is cut",
      9000,
      5000,
      5000,
      "the webhook's timeout 9000 ms, capped below the lease",
    ],
  ];
  for (const [name, own, maxTimeoutMs, ms, source] of cases) {
    test(name, () => {
      const limits = { timeoutMs: 10_000, maxTimeoutMs };
      expect(timeoutOf(claim({ webhook: { timeoutMs: own } }), limits)).toEqual({ ms, source });
    });
  }
});

describe("leaseLeft()", () => {
  const cases: Array<[string, Parameters<typeof claim>[0], number, number]> = [
    ["from now", { leaseExpiresAt: 50_000 }, 20_000, 30_000],
    [
      "from its send slot when that is later",
      { leaseExpiresAt: 50_000, notBefore: 40_000 },
      20_000,
      10_000,
    ],
    [
      "from now when the slot has passed",
      { leaseExpiresAt: 50_000, notBefore: 10_000 },
      20_000,
      30_000,
    ],
    ["a run-out lease leaves less than nothing", { leaseExpiresAt: 50_000 }, 51_000, -1000],
    ["no lease at all counts as run out", { leaseExpiresAt: null }, 20_000, -20_000],
  ];
  for (const [name, options, t, left] of cases) {
    test(name, () => expect(leaseLeft(claim(options), t)).toBe(left));
  }
});

describe("startNeedMs()", () => {
  const cases: Array<[string, number | null, typeof LIMITS, number]> = [
    ["the default timeout and the margin", null, LIMITS, 10_000 + LEASE_MARGIN_MS],
    ["the webhook's own timeout and the margin", 2000, LIMITS, 2000 + LEASE_MARGIN_MS],
    // Capped at the lease less the margin, so the need is the whole lease at most.
    ["an own timeout longer than the lease", 120_000, LIMITS, 60_000],
    [
      "a lease shorter than timeout and margin (tests): the lease",
      null,
      { timeoutMs: 10_000, leaseMs: 4000 },
      4000,
    ],
  ];
  for (const [name, own, limits, need] of cases) {
    test(name, () =>
      expect(startNeedMs(claim({ webhook: { timeoutMs: own } }), limits)).toBe(need),
    );
  }
});

describe("mayStillSend()", () => {
  // The need right before the request: the timeout, but half the lease at most.
  const cases: Array<[string, number, typeof LIMITS, boolean]> = [
    ["a timeout left", 10_000, LIMITS, true],
    ["less than a timeout left", 9_999, LIMITS, false],
    ["half a short lease left", 2000, { timeoutMs: 10_000, leaseMs: 4000 }, true],
    ["less than half a short lease", 1999, { timeoutMs: 10_000, leaseMs: 4000 }, false],
  ];
  for (const [name, left, limits, may] of cases) {
    test(name, () =>
      expect(mayStillSend(claim({ leaseExpiresAt: 100_000 }), 100_000 - left, limits)).toBe(may),
    );
  }
});

describe("requestCapMs()", () => {
  const cases: Array<[string, number, number]> = [
    ["ends a margin before the lease", 30_000, 30_000 - LEASE_MARGIN_MS],
    ["never under 100 ms, however little is left", 500, 100],
    ["never under 100 ms after the lease ran out", -5000, 100],
  ];
  for (const [name, left, cap] of cases) {
    test(name, () =>
      expect(requestCapMs(claim({ leaseExpiresAt: 100_000 }), 100_000 - left)).toBe(cap),
    );
  }
});

describe("createFreshness().prepare()", () => {
  const t = 1_000_000;
  const lease = t + 30_000;
  const cases: Array<
    [
      string,
      { readAt?: number; enabled?: boolean; leaseExpiresAt?: number },
      "as held" | "newest" | null,
    ]
  > = [
    ["values read just now, lease long enough: sent as held", { readAt: t }, "as held"],
    ["values read WEBHOOK_FRESH_MS ago: still sent", { readAt: t - WEBHOOK_FRESH_MS }, "as held"],
    [
      "values older than WEBHOOK_FRESH_MS: renewed first",
      { readAt: t - WEBHOOK_FRESH_MS - 1 },
      null,
    ],
    ["never read: renewed first", {}, null],
    ["webhook read as disabled: renewed first", { readAt: t, enabled: false }, null],
    [
      "lease shorter than the timeout and margin: renewed first",
      { readAt: t, leaseExpiresAt: t + 10_999 },
      null,
    ],
    [
      "lease of exactly the timeout and margin: sent",
      { readAt: t, leaseExpiresAt: t + 11_000 },
      "as held",
    ],
    ["newer values read with another claim: sent with those", { readAt: t }, "newest"],
  ];
  for (const [name, given, expected] of cases) {
    test(name, () => {
      const freshness = createFreshness(LIMITS, () => t);
      const held = claim({ leaseExpiresAt: given.leaseExpiresAt ?? lease });
      if (given.readAt !== undefined) {
        // The held claim's own values, unless the case reads others.
        const read =
          expected === "newest"
            ? claim({ webhook: { url: "https://hooks.example/moved" } })
            : given.enabled === false
              ? claim({ webhook: { enabled: false } })
              : held;
        freshness.remember([read], given.readAt);
      }
      const prepared = freshness.prepare(held, t);
      if (expected === null) expect(prepared).toBeNull();
      else if (expected === "as held") expect(prepared).toBe(held);
      else {
        expect(prepared?.webhook.url).toBe("https://hooks.example/moved");
        expect(prepared?.delivery).toBe(held.delivery);
      }
    });
  }

  test("remember() keeps the newest read of a webhook, not the last one told", () => {
    const freshness = createFreshness(LIMITS, () => t);
    freshness.remember([claim({ webhook: { url: "https://hooks.example/new" } })], t);
    freshness.remember([claim({ webhook: { url: "https://hooks.example/old" } })], t - 100);
    const held = claim({ leaseExpiresAt: lease });
    expect(freshness.prepare(held, t)?.webhook.url).toBe("https://hooks.example/new");
  });
});
