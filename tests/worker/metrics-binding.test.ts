import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../lib/config/errors.ts";
import { assertMetricsBinding } from "../../lib/worker/metrics-binding.ts";

describe("assertMetricsBinding()", () => {
  test("allows loopback without a token and any address with one", () => {
    expect(() => assertMetricsBinding("127.0.0.1", undefined)).not.toThrow();
    expect(() => assertMetricsBinding("::1", null)).not.toThrow();
    expect(() => assertMetricsBinding("0.0.0.0", "token")).not.toThrow();
  });

  test("refuses a non-loopback address without ADMIN_TOKEN in one line naming the flag", () => {
    expect(() => assertMetricsBinding("0.0.0.0", "")).toThrow(
      new ConfigError(
        "--metrics-host=0.0.0.0 is not a loopback address, so ADMIN_TOKEN is required to protect /metrics: set ADMIN_TOKEN or listen on 127.0.0.1",
      ),
    );
    expect(() => assertMetricsBinding("0.0.0.0", null)).toThrow(ConfigError);
  });
});
