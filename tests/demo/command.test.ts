import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { runCommand } from "citty";
import { UsageError } from "../../lib/config/errors.ts";
import { createDemoCommand } from "../../lib/demo/command.ts";
import { demoWorkerHooks } from "../../lib/demo/run.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { claimFixture } from "../fakes/claim.ts";

test("`demo` prints one line per attempt and deletes its database when stopped", async () => {
  const lines: string[] = [];
  const logger = createMemoryLogger();
  let database = "";
  const { promise: delivered, resolve } = Promise.withResolvers<void>();
  const command = createDemoCommand({
    print: (text) => {
      lines.push(text);
      if (text.startsWith("worker: ")) resolve();
    },
    logger,
    async untilStopped() {
      database = /^Database: +(\S+)/m.exec(lines.join("\n"))?.[1] ?? "";
      expect(existsSync(database)).toBe(true);
      await delivered;
    },
  });
  await runCommand(command, { rawArgs: ["--port", "0", "--receiver-port", "0"] });
  const attempts = lines.filter((line) => line.startsWith("worker: "));
  expect(attempts).toHaveLength(1);
  expect(attempts[0]).toMatch(
    /^worker: Delivery 1 \(item\.created\) to "demo receiver", attempt 1\/4 \(\d+ ms\): HTTP 200$/,
  );
  expect(lines.at(-1)).toBe("Demo stopped.");
  expect(existsSync(database)).toBe(false);
});

test("`demo --prot 0` is refused before anything starts", async () => {
  const lines: string[] = [];
  const command = createDemoCommand({ print: (text) => lines.push(text) });
  await expect(runCommand(command, { rawArgs: ["--prot", "0"] })).rejects.toThrow(
    new UsageError("Unknown option --prot: did you mean --port? (see --help)"),
  );
  expect(lines).toEqual([]);
});

test("demoWorkerHooks() prints a failed attempt once and does not log it too", () => {
  const printed: string[] = [];
  const logger = createMemoryLogger();
  const hooks = demoWorkerHooks((text) => printed.push(text), logger, { maxAttempts: 5 });
  const claim = claimFixture({
    id: 2,
    delivery: { event: "item.updated" },
    webhook: { name: "demo receiver", retrySchedule: "short" },
  });
  hooks.onFinished?.(
    claim,
    {
      record: {
        startedAt: 0,
        durationMs: 3,
        statusCode: null,
        outcome: "network_error",
        error: "connection refused by 127.0.0.1:9000",
        responseHeaders: null,
        responseBody: null,
      },
      outcome: { state: "queued", nextAttemptAt: Date.UTC(2030, 0, 1) },
    },
    true,
  );
  expect(printed).toEqual([
    'worker: Delivery 2 (item.updated) to "demo receiver", attempt 1/5 (3 ms): connection refused by 127.0.0.1:9000; retry at 2030-01-01T00:00:00.000Z',
  ]);
  expect(logger.lines).toEqual([]);
});
