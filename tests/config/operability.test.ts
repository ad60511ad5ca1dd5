import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../lib/config/errors.ts";
import { loadOperabilityConfig } from "../../lib/config/operability.ts";

describe("loadOperabilityConfig()", () => {
  test("defaults: pretty info logs, 30 days retention, disable after 24 h and 10 failures, 5 s heartbeats", () => {
    expect(loadOperabilityConfig({})).toEqual({
      log: { format: "pretty", level: 3 },
      retentionDays: 30,
      autoDisable: {
        enabled: true,
        failingForMs: 24 * 3_600_000,
        minFailedDeliveries: 10,
        onGone: true,
      },
      heartbeatIntervalMs: 5_000,
    });
  });

  test("reads every variable, and treats empty values as unset", () => {
    const config = loadOperabilityConfig({
      LOG_FORMAT: "json",
      LOG_LEVEL: "debug",
      WEBHOOK_RETENTION_DAYS: "0",
      WEBHOOK_AUTO_DISABLE: "false",
      WEBHOOK_AUTO_DISABLE_HOURS: "72",
      WEBHOOK_AUTO_DISABLE_FAILURES: "3",
      WORKER_HEARTBEAT_MS: " ",
    });
    expect(config).toEqual({
      log: { format: "json", level: 4 },
      retentionDays: 0,
      autoDisable: {
        enabled: false,
        failingForMs: 72 * 3_600_000,
        minFailedDeliveries: 3,
        onGone: true,
      },
      heartbeatIntervalMs: 5_000,
    });
  });

  test.each([
    ["LOG_FORMAT", "xml", "expected json or pretty"],
    ["LOG_LEVEL", "loud", "expected error, warn, info or debug"],
    ["WEBHOOK_RETENTION_DAYS", "30d", "expected a whole number from 0 to 3650"],
    ["WEBHOOK_AUTO_DISABLE", "maybe", "expected true or false"],
    ["WEBHOOK_AUTO_DISABLE_HOURS", "0", "expected a whole number from 1 to 8760"],
    ["WEBHOOK_AUTO_DISABLE_FAILURES", "-1", "expected a whole number from 1 to 1000000"],
    ["WORKER_HEARTBEAT_MS", "100", "expected a whole number from 1000 to 60000"],
  ])("rejects %s=%s with one line naming the variable", (name, value, expected) => {
    const load = () => loadOperabilityConfig({ [name]: value });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(new ConfigError(`${name}="${value}" is invalid: ${expected}`));
  });
});
