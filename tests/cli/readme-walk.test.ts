/**
 * The README's "by hand, in three terminals" lines, run as written as a new user would type them
 * (bash, `bun run …` from the checkout): the receiver, the worker with its WEBHOOK_ALLOWED_HOSTS,
 * `webhooks add` and `emit`. The one change is the port: the receiver takes a free one
 * (`--port 0`) and the other lines get it in place of 9000, as no test may use a fixed port. The
 * first delivery must reach the receiver at its first attempt, not after a retry minutes away.
 */
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Subprocess } from "bun";
import { outputReader } from "../fakes/output-reader.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

// Four bun processes, each a second or more on a loaded 2-core machine.
setDefaultTimeout(90_000);

const ROOT = join(import.meta.dir, "..", "..");

/** The command lines of the README's three-terminal block, comments taken off. */
function readmeLines(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("## The same by hand, in three terminals");
  const block = readme.slice(start).match(/```sh\n([\s\S]*?)```/)?.[1];
  if (start < 0 || block === undefined) throw new Error("README.md has no three-terminal block");
  return block
    .split("\n")
    .map((line) => line.replace(/\s+# .*$/, "").trim())
    .filter((line) => line !== "");
}

const tempDir = tempDirs("readme-walk-");
const running: Subprocess[] = [];
afterEach(async () => {
  for (const child of running.splice(0)) child.kill();
});

/** A line run by bash in the checkout, on the test's own database. */
function shell(line: string, database: string) {
  return Bun.spawn(["bash", "-c", line], {
    cwd: ROOT,
    env: {
      ...process.env,
      PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
      DATABASE_URL: database,
      NO_COLOR: "1",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
}

/** Reads a stream until `pattern` shows; resolves with its match (the stream stays open). */
async function waitFor(stream: ReadableStream<Uint8Array>, pattern: RegExp): Promise<string[]> {
  const output = outputReader(stream);
  const match = await output.until(pattern);
  output.release();
  return [...match];
}

test("the README's three terminals: the first emit reaches the receiver at its first attempt", async () => {
  const [receiverLine, workerLine, addLine, emitLine, ...rest] = readmeLines();
  expect(rest).toEqual([]);
  expect(receiverLine).toBe("bun run receiver");
  const database = join(tempDir(), "app.db");

  const receiver = shell(`${receiverLine} --port 0`, database);
  running.push(receiver);
  const [, port] = await waitFor(receiver.stdout, /Listening on port http:\/\/[^:]+:(\d+)/);
  const withPort = (line: string | undefined) => (line ?? "").replaceAll("9000", String(port));

  const worker = shell(withPort(workerLine), database);
  running.push(worker);
  await waitFor(worker.stderr, /Worker \S+ started/);

  const add = shell(withPort(addLine), database);
  expect(await add.exited).toBe(0);
  const emit = shell(withPort(emitLine), database);
  expect(await emit.exited).toBe(0);

  const [request] = await waitFor(
    receiver.stdout,
    /\[1\][^\n]*"POST \/ HTTP\/1\.1" 200[\s\S]*?-{12}/,
  );
  expect(request).toContain('"data":{"id":1,"name":"Widget"}');
  const list = shell("bun run webhooks deliveries --json", database);
  const deliveries = JSON.parse(await new Response(list.stdout).text());
  expect(deliveries).toMatchObject([
    { state: "successful", attempts: [{ attempt: 1, statusCode: 200 }] },
  ]);
});
