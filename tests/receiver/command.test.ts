import { expect, test } from "bun:test";
import { EventEmitter } from "node:events";
import { runCommand } from "citty";
import { ConfigError } from "../../lib/config/errors.ts";
import { createReceiverCommand } from "../../lib/receiver/command.ts";
import { generateSecret, standardWebhookHeaders } from "../../lib/webhooks/sending/signing.ts";

/** Stands in for stdout: keeps what is written, and can fail like a closed pipe. */
function fakeStdout() {
  const emitter = new EventEmitter();
  let text = "";
  let waiting: { pattern: RegExp; resolve: (match: RegExpExecArray) => void } | null = null;
  return {
    out: {
      write(chunk: string) {
        text += chunk;
        const match = waiting?.pattern.exec(text);
        if (waiting && match) {
          waiting.resolve(match);
          waiting = null;
        }
        return true;
      },
      on: (event: "error", listener: (error: Error) => void) => emitter.on(event, listener),
      off: (event: "error", listener: (error: Error) => void) => emitter.off(event, listener),
    },
    get text() {
      return text;
    },
    /** Resolves once `pattern` matches what was written. */
    until(pattern: RegExp): Promise<RegExpExecArray> {
      const match = pattern.exec(text);
      if (match) return Promise.resolve(match);
      return new Promise((resolve) => {
        waiting = { pattern, resolve };
      });
    },
    close() {
      emitter.emit("error", Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
    },
  };
}

test("`receiver` prints each request until SIGINT, then 'Exiting...'", async () => {
  const stdout = fakeStdout();
  const signals = new EventEmitter();
  const running = runCommand(
    createReceiverCommand({ out: stdout.out, signals: { source: signals } }),
    { rawArgs: ["--port", "0", "--no-headers"] },
  );
  const [, url] = await stdout.until(
    /Listening on port (http:\/\/127\.0\.0\.1:\d+)\. Stop with CONTROL-C\.\n/,
  );
  const response = await fetch(`${url}/hook`, { method: "POST", body: "hello" });
  expect(await response.text()).toBe("Webhook received!");
  await stdout.until(/------------\n/);
  signals.emit("SIGINT");
  signals.emit("SIGINT");
  await running;
  expect(stdout.text).toMatch(
    /"POST \/hook HTTP\/1\.1" 200 -\nhello\n------------\nExiting\.\.\.\n$/,
  );
  await expect(fetch(`${url}/`)).rejects.toThrow();
});

test("`receiver` stops quietly when its output goes away", async () => {
  const stdout = fakeStdout();
  const running = runCommand(
    createReceiverCommand({ out: stdout.out, signals: { source: new EventEmitter() } }),
    { rawArgs: ["--port", "0"] },
  );
  await stdout.until(/Listening on port/);
  stdout.close();
  await running;
  expect(stdout.text).not.toContain("Exiting...");
});

test("`receiver` refuses a taken port naming --port and the address", async () => {
  using taken = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const stdout = fakeStdout();
  const command = createReceiverCommand({
    out: stdout.out,
    signals: { source: new EventEmitter() },
  });
  const error = await runCommand(command, { rawArgs: ["--port", String(taken.port)] }).catch(
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as Error).message).toBe(
    `--port=${taken.port} is in use on 127.0.0.1 (http://127.0.0.1:${taken.port}): stop what listens there or pick another port`,
  );
  expect(stdout.text).toBe("");
});

test("`receiver` with two secrets in RECEIVER_SECRET accepts a request signed by either, over HTTP", async () => {
  const [old, rotated] = [generateSecret(), generateSecret()];
  const stdout = fakeStdout();
  const signals = new EventEmitter();
  // Both secrets of a rotation's overlap in the variable, kept out of `ps`.
  const running = runCommand(
    createReceiverCommand({
      out: stdout.out,
      env: { RECEIVER_SECRET: `${rotated},${old}` },
      signals: { source: signals },
    }),
    { rawArgs: ["--port", "0", "--no-headers"] },
  );
  const [, url] = await stdout.until(/Listening on port (http:\/\/127\.0\.0\.1:\d+)\./);
  for (const secret of [old, rotated, generateSecret()]) {
    const body = '{"event":"created"}';
    const headers = standardWebhookHeaders({
      secret,
      messageId: "msg_1",
      timestamp: Date.now() / 1000,
      body,
    });
    await fetch(`${url}/`, { method: "POST", headers, body });
  }
  await stdout.until(/(Signature: [^\n]+\n[\s\S]*){3}/);
  signals.emit("SIGINT");
  await running;
  expect([...stdout.text.matchAll(/Signature: ([^\n]+)/g)].map((m) => m[1])).toEqual([
    "valid",
    "valid",
    "INVALID (no matching signature)",
  ]);
});
