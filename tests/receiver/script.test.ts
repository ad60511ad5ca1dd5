import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { connect } from "node:net";
import { join } from "node:path";
import { standardWebhookHeaders } from "../../lib/webhooks/sending/signing.ts";
import { outputReader } from "../fakes/output-reader.ts";

// Each test starts bun processes: about a second alone, several on a loaded 2-core machine.
setDefaultTimeout(30_000);

const SCRIPT = join(import.meta.dir, "../../scripts/receiver.ts");

/** Sends `request` as is over a TCP connection and resolves with the whole response. */
function rawRequest(port: number, request: string): Promise<string> {
  const { promise, resolve, reject } = Promise.withResolvers<string>();
  let response = "";
  const socket = connect(port, "127.0.0.1", () => socket.write(request));
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    response += chunk;
    if (response.endsWith("Webhook received!")) {
      socket.end();
      resolve(response);
    }
  });
  socket.on("error", reject);
  return promise;
}

function start(...args: string[]) {
  const child = Bun.spawn(["bun", SCRIPT, ...args], { stdout: "pipe", stderr: "pipe" });
  return { child, stdout: outputReader(child.stdout) };
}

const LISTENING = /^Listening on port http:\/\/127\.0\.0\.1:(\d+)\. Stop with CONTROL-C\.\n/;

describe("bun scripts/receiver.ts", () => {
  test("prints each request, then 'Exiting...' on SIGINT and exits 0", async () => {
    const { child, stdout } = start("--port", "0");
    try {
      const port = Number((await stdout.until(LISTENING))[1]);
      expect(port).toBeGreaterThan(0);

      // NetBox's documented example, sent byte for byte as curl sends it.
      const response = await rawRequest(
        port,
        [
          "POST /hooks/netbox?x=1 HTTP/1.1",
          "Host: localhost:9000",
          "User-Agent: curl/7.58.0",
          "Accept: */*",
          "Content-Length: 14",
          "Content-Type: application/x-www-form-urlencoded",
          "",
          '{"foo": "bar"}',
        ].join("\r\n"),
      );
      expect(response).toStartWith("HTTP/1.1 200 OK\r\n");
      expect(response).toEndWith("\r\n\r\nWebhook received!");

      const block = (await stdout.until(/\n(\[1\][\s\S]*?------------\n)/))[1];
      const date = /^\[1\] (.+ GMT) /.exec(block ?? "")?.[1] ?? "";
      expect(new Date(date).toUTCString()).toBe(date);
      // Bun hands the headers lowercased and sorted.
      expect(block).toBe(
        [
          `[1] ${date} 127.0.0.1 "POST /hooks/netbox?x=1 HTTP/1.1" 200 -`,
          "accept: */*",
          "content-length: 14",
          "content-type: application/x-www-form-urlencoded",
          "host: localhost:9000",
          "user-agent: curl/7.58.0",
          "",
          '{"foo": "bar"}',
          "------------\n",
        ].join("\n"),
      );

      child.kill("SIGINT");
      expect(await child.exited).toBe(0);
      expect(await stdout.rest()).toEndWith("------------\nExiting...\n");
      expect(await new Response(child.stderr).text()).toBe("");
    } finally {
      child.kill("SIGKILL");
    }
  });

  test("checks signatures with --secret, hides headers with --no-headers, stops on SIGTERM", async () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const { child, stdout } = start("--port", "0", "--no-headers", "--pretty", "--secret", secret);
    try {
      const port = Number((await stdout.until(LISTENING))[1]);
      const body = '{"event":"item.created"}';
      const headers = standardWebhookHeaders({
        secret,
        messageId: "msg_1",
        timestamp: Math.floor(Date.now() / 1000),
        body,
      });
      await fetch(`http://127.0.0.1:${port}/`, { method: "POST", headers, body });
      const block = (await stdout.until(/\n(\[1\][\s\S]*?------------\n)/))[1] ?? "";
      expect(block.split("\n").slice(1)).toEqual([
        "{",
        '  "event": "item.created"',
        "}",
        "Signature: valid",
        "------------",
        "",
      ]);
      child.kill("SIGTERM");
      expect(await child.exited).toBe(0);
      expect(await stdout.rest()).toEndWith("Exiting...\n");
    } finally {
      child.kill("SIGKILL");
    }
  });

  test("exits 0 without a stack trace when its stdout is closed (| head -1)", async () => {
    const { child, stdout } = start("--port", "0");
    try {
      const port = Number((await stdout.until(LISTENING))[1]);
      await stdout.close();
      // As under `| head -1`, requests keep coming: a write can still land in the pipe's buffer
      // before the close reaches the child, so one request may not be enough to meet EPIPE.
      let exited = false;
      void child.exited.then(() => {
        exited = true;
      });
      for (let i = 0; i < 100 && !exited; i++) {
        await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: "x" }).catch(() => null);
      }
      expect(await child.exited).toBe(0);
      expect(await new Response(child.stderr).text()).toBe("");
    } finally {
      child.kill("SIGKILL");
    }
  });

  test("exits 2 with one line on stderr for a bad flag", async () => {
    for (const args of [
      ["--port", "abc"],
      ["--port", "70000"],
      ["--secret", "nope"],
    ]) {
      const child = Bun.spawn(["bun", SCRIPT, ...args], { stdout: "pipe", stderr: "pipe" });
      expect(await child.exited).toBe(2);
      const stderr = await new Response(child.stderr).text();
      expect(stderr).toMatch(/^error: --(port|secret)[ =][^\n]*is invalid: [^\n]+\n$/);
      expect(await new Response(child.stdout).text()).toBe("");
    }
  });
});
