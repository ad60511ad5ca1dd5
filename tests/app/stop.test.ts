import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { statusOf } from "../fakes/raw-http.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

const SCRIPT = join(import.meta.dir, "..", "..", "scripts", "app.ts");
const tempDir = tempDirs("app-stop-");
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const done of cleanups.splice(0)) await done();
});

/** What a stream has said so far, and a wait until it says something matching. */
function watched(stream: ReadableStream<Uint8Array>) {
  let text = "";
  let over = false;
  let wake = () => {};
  const ended = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      text += decoder.decode(chunk, { stream: true });
      wake();
    }
    over = true;
    wake();
  })();
  return {
    text: () => text,
    ended,
    async until(pattern: RegExp): Promise<RegExpExecArray> {
      for (;;) {
        const found = pattern.exec(text);
        if (found) return found;
        if (over) throw new Error(`The stream ended without ${pattern}:\n${text}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    },
  };
}

/** A TCP connection whose received bytes can be awaited, for a request written in parts. */
async function connection(port: number) {
  let received = "";
  const waiters: Array<() => void> = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  let closed = false;
  const socket = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_socket, chunk) {
        received += new TextDecoder().decode(chunk);
        wake();
      },
      close() {
        closed = true;
        wake();
      },
    },
  });
  cleanups.push(() => socket.end());
  return {
    write: (text: string) => socket.write(text),
    /** Everything received once it contains `text`, or once the server closed. */
    async until(text: string): Promise<string> {
      while (!received.includes(text) && !closed) {
        const { promise, resolve } = Promise.withResolvers<void>();
        waiters.push(resolve);
        await promise;
      }
      return received;
    },
  };
}

function startApp(): {
  child: Subprocess<"ignore", "pipe", "pipe">;
  stderr: ReturnType<typeof watched>;
} {
  const child = Bun.spawn([process.execPath, SCRIPT, "--port", "0"], {
    env: { PATH: process.env.PATH ?? "", DATABASE_URL: join(tempDir(), "app.db") },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await child.exited;
  });
  return { child, stderr: watched(child.stderr) };
}

test("SIGTERM: a request in flight is answered (its item written), no new connection is taken, then the app exits 0", async () => {
  const { child, stderr } = startApp();
  const port = Number((await stderr.until(/Inventory app on http:\/\/127\.0\.0\.1:(\d+)/))[1]);

  // A create whose body comes in two parts: the server answers "100 Continue" once the request
  // is in its handler, and the handler then waits for the rest of the body.
  const body = JSON.stringify({ sku: "SKU-STOP", name: "Sent across a stop", quantity: 1 });
  const half = Math.floor(body.length / 2);
  const client = await connection(port);
  client.write(
    `POST /api/items HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n${body.slice(0, half)}`,
  );
  await client.until("100 Continue");

  child.kill("SIGTERM");
  await stderr.until(/Stopping/);
  // Stopped listening: a new client is refused while the one in flight waits.
  await expect(
    Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } }),
  ).rejects.toThrow();

  client.write(body.slice(half));
  const answer = await client.until('"SKU-STOP"');
  // After the interim 100 Continue, the final answer: the item created.
  expect(statusOf(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toBe(201);
  expect(answer).toContain('"name":"Sent across a stop"');

  expect(await child.exited).toBe(0);
  await stderr.ended;
  expect(stderr.text()).toContain("Stopping: no new requests; answering the 1 in flight first");
  expect(stderr.text()).not.toContain("Database has closed");
}, 30_000); // a bun process started and stopped: seconds on a loaded machine
