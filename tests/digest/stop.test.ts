import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gate, startDigestWorld } from "../fakes/digest-world.ts";
import { textPosts } from "../fakes/hn-search.ts";
import { echoTitle } from "../fakes/ollama.ts";
import { outputOf } from "../fakes/process-output.ts";
import { hasTool } from "../fakes/system-tools.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";
import { startInTerminal } from "../fakes/terminal.ts";

// Bun processes and a tmux pane: seconds on a loaded 2-core machine.
setDefaultTimeout(60_000);

const ROOT = join(import.meta.dir, "..", "..");
const HAS_TMUX = hasTool("tmux", "the digest's Ctrl-C in a real terminal");
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const tempDir = tempDirs("digest-stop-");

/** `bun scripts/digest.ts --out <file>` over an existing digest, in a child process. */
async function digestOver(env: Record<string, string>, yesterday: string) {
  const dir = tempDir();
  const target = join(dir, "digest.md");
  writeFileSync(target, yesterday);
  const child = Bun.spawn([process.execPath, "scripts/digest.ts", "--out", target], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: dir, XDG_CACHE_HOME: dir, NO_COLOR: "1", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const { stdout, stderr, code } = await outputOf(child);
  return { stdout, stderr, code, target, files: readdirSync(dir) };
}

// Not valid UTF-8 and with no final newline: "left exactly as it was" means every byte.
const YESTERDAY = "# Yesterday's digest\n\nA good one. \u00e9\u0000";

describe("the digest stops when the model is gone", () => {
  test("the model removed after 6 answers: 3 calls fail, no more are made, --out is untouched, exit 1", async () => {
    using world = startDigestWorld({
      stories: textPosts(10),
      ollama: {
        generate: (body, call) =>
          call <= 6
            ? echoTitle(body)
            : Response.json({ error: `model '${body.model}' not found` }, { status: 404 }),
      },
    });
    const run = await digestOver(world.env, YESTERDAY);
    expect(run.code).toBe(1);
    expect(world.ollama.generateCalls).toHaveLength(9);
    expect(readFileSync(run.target, "utf8")).toBe(YESTERDAY);
    expect(run.files.filter((name) => name.endsWith(".tmp"))).toEqual([]);
    expect(run.stdout).toBe("");
    const lines = run.stderr.trim().split("\n");
    expect(lines.filter((line) => /summary failed/.test(line))).toEqual([]);
    expect(lines.at(-1)).toBe(
      `error: Stopped after 3 failed calls in a row: Ollama at ${world.ollama.url} cannot answer (Ollama answered HTTP 404: model 'llama3.2' not found). Run \`ollama pull llama3.2\`, or choose another model with --model / OLLAMA_MODEL. ${run.target} was left as it was.`,
    );
  });

  test("Ollama stopped after 6 answers: connection refused three times, --out untouched, exit 1", async () => {
    using world = startDigestWorld({ stories: textPosts(10), ollama: { stopAfter: 6 } });
    const run = await digestOver(world.env, YESTERDAY);
    expect(run.code).toBe(1);
    expect(world.ollama.generateCalls).toHaveLength(6);
    expect(readFileSync(run.target, "utf8")).toBe(YESTERDAY);
    const lines = run.stderr.trim().split("\n");
    expect(lines.filter((line) => /summary failed/.test(line))).toEqual([]);
    expect(lines.at(-1)).toStartWith(
      `error: Stopped after 3 failed calls in a row: Ollama at ${world.ollama.url} cannot answer (Ollama did not answer at ${world.ollama.url}/api/generate (`,
    );
    expect(lines.at(-1)).toContain(
      "Start Ollama with `ollama serve`, or point OLLAMA_ENDPOINT_URL / --ollama-url at a running one.",
    );
  });

  test("failures that an answer follows were one-offs: every call is made and each is warned", async () => {
    using world = startDigestWorld({
      stories: textPosts(6),
      ollama: {
        generate: (body, call) =>
          call === 2 || call === 3 || call === 5
            ? Response.json({ error: "llama runner process has terminated" }, { status: 500 })
            : echoTitle(body),
      },
    });
    const run = await digestOver(world.env, YESTERDAY);
    expect(run.code).toBe(0);
    expect(world.ollama.generateCalls).toHaveLength(6);
    expect(readFileSync(run.target, "utf8")).toContain(
      "**Post.** Summary of the article of Post 6.",
    );
    expect(run.stderr.match(/summary failed: Ollama answered HTTP 500/g)).toHaveLength(3);
  });
});

describe("Ctrl-C", () => {
  test.skipIf(!HAS_TMUX)(
    "in a real terminal: no warning per story, one line saying how far it got, exit 130",
    async () => {
      const third = gate();
      const never = gate();
      cleanups.push(() => never.open());
      using world = startDigestWorld({
        stories: textPosts(6),
        ollama: {
          generate: async (body, call) => {
            if (call < 3) return echoTitle(body);
            third.open();
            await never.promise;
            return echoTitle(body);
          },
        },
      });
      const dir = tempDir();
      const env = Object.entries({ ...world.env, HOME: dir, XDG_CACHE_HOME: dir, NO_COLOR: "1" })
        .map(([name, value]) => `${name}='${value}'`)
        .join(" ");
      const terminal = startInTerminal(
        `env ${env} bun scripts/digest.ts --concurrency 4 > ${join(dir, "out.md")}; echo "EXIT=$?"`,
        ROOT,
      );
      cleanups.push(() => terminal.close());
      await third.promise;
      terminal.press("C-c");
      const text = await terminal.until(/EXIT=\d+/);
      expect(text).toContain("EXIT=130");
      // The stories written before the key, of all of them: what the digest on stdout holds.
      const written = Number(/Interrupted after (\d) of 6 stories\n/.exec(text)?.[1]);
      const digest = readFileSync(join(dir, "out.md"), "utf8");
      expect(written).toBeGreaterThanOrEqual(0);
      expect(digest.match(/Summary of the article of Post \d/g) ?? []).toHaveLength(written);
      expect(text).not.toMatch(/summary failed|comments unavailable|Unexpected failure/);
      // Four calls were in flight or queued; only the one line speaks of them.
      expect(text.match(/Interrupted/g)).toHaveLength(1);
    },
  );
});
