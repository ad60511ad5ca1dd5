import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { articleHtml } from "../fakes/article-site.ts";
import { gate, startDigestWorld } from "../fakes/digest-world.ts";
import { storyHit } from "../fakes/hn-search.ts";
import { canUsePrivateDev, makeDev, withPrivateDev } from "../fakes/private-dev.ts";
import { outputOf } from "../fakes/process-output.ts";

// Each test starts bun processes: about a second alone, several on a loaded 2-core machine.
setDefaultTimeout(30_000);

// A few checks of the real entry script in a child process: exit codes and what reaches
// stdout and stderr. Everything else is tested in-process through the command.

const ROOT = join(import.meta.dir, "..", "..");
const DEV_NAMES = ["fd", "null", "random", "stderr", "stdout", "urandom", "zero"];
const privateDev = canUsePrivateDev();
if (!privateDev) {
  console.warn(
    "[skip] digest --out /dev/stdout: needs root and unshare (apt-get install util-linux)",
  );
}
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function runScript(args: string[], env: Record<string, string>) {
  const cache = mkdtempSync(join(tmpdir(), "digest-script-"));
  dirs.push(cache);
  const child = Bun.spawn([process.execPath, "scripts/digest.ts", ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: cache,
      XDG_CACHE_HOME: cache,
      NO_COLOR: "1",
      ...env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  return outputOf(child);
}

describe("scripts/digest.ts", () => {
  test("a bad env value exits 2 with exactly one line on stderr", async () => {
    const { code, stdout, stderr } = await runScript([], { MAX_COMMENTS_PER_STORY: "abc" });
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe(
      'error: MAX_COMMENTS_PER_STORY="abc" is invalid: expected a whole number from 1 to 1000\n',
    );
  });

  test("an unreachable Ollama exits 1 with an actionable line", async () => {
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const url = `http://127.0.0.1:${closed.port}`;
    closed.stop(true);
    // A proxy's basic auth in the URL is sent, never printed.
    const withCredentials = url.replace("http://", "http://digest:s3cret@");
    const { code, stderr } = await runScript([], { OLLAMA_ENDPOINT_URL: withCredentials });
    expect(code).toBe(1);
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toContain(`${url}/api/tags`);
    expect(stderr).not.toContain("s3cret");
    expect(stderr).toContain("`ollama serve`");
    expect(stderr).toContain("`ollama pull llama3.2`");
  });

  test("--help prints the usage on stdout and exits 0", async () => {
    const { code, stdout } = await runScript(["--help"], {});
    expect(code).toBe(0);
    expect(stdout).toContain("--no-cache");
    expect(stdout).toContain("MAX_COMMENTS_PER_STORY");
  });

  test("writes the digest on stdout and only logs on stderr", async () => {
    const body = Array.from(
      { length: 12 },
      (_, i) => `Paragraph ${i} with enough words to be an article.`,
    );
    using world = startDigestWorld({
      stories: [storyHit({ title: "Only story", url: "/only", num_comments: 0 })],
      pages: { "/only": { body: articleHtml("Only story", body) } },
    });
    const { code, stdout, stderr } = await runScript([], world.env);
    expect(code).toBe(0);
    expect(stdout).toStartWith("# Hacker News digest\n");
    expect(stdout).toContain("**Article.** Summary of the article of Only story.");
    expect(stderr).not.toContain("# Hacker News digest");
    expect(stderr).toContain("Digest of 1 story in");
  });
});

describe("scripts/digest.ts and Ctrl-C", () => {
  test("a real SIGINT during --out removes the temporary file, keeps the old one and exits 130", async () => {
    const first = gate();
    const never = gate();
    using world = startDigestWorld({
      stories: [
        storyHit({ title: "Slow story", url: undefined, story_text: "Text", num_comments: 0 }),
      ],
      ollama: {
        // The first summary never finishes: the digest is mid-way when the signal comes.
        generate: async () => {
          first.open();
          await never.promise;
          return "unreachable";
        },
      },
    });
    const dir = mkdtempSync(join(tmpdir(), "digest-sigint-"));
    dirs.push(dir);
    const target = join(dir, "digest.md");
    writeFileSync(target, "yesterday's digest");
    const child = Bun.spawn([process.execPath, "scripts/digest.ts", "--out", target], {
      cwd: ROOT,
      env: {
        ...world.env,
        PATH: process.env.PATH ?? "",
        HOME: dir,
        XDG_CACHE_HOME: dir,
        NO_COLOR: "1",
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      await first.promise;
      const during = readdirSync(dir).filter((name) => name.endsWith(".tmp"));
      expect(during).toHaveLength(1);
      child.kill("SIGINT");
      const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
      expect(code).toBe(130);
      expect(stderr).toContain(`Interrupted after 0 of 1 story; ${target} was left as it was`);
      expect(readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
      expect(readFileSync(target, "utf8")).toBe("yesterday's digest");
    } finally {
      never.open();
      child.kill("SIGKILL");
    }
  }, 20_000);
});

describe.if(privateDev)(
  "scripts/digest.ts --out /dev/stdout and /dev/stderr (root, a /dev of its own)",
  () => {
    /** Runs the script with `dev` as its /dev and stdout redirected to a file, as a shell's `>` does. */
    async function runWithDev(args: string[]) {
      using world = startDigestWorld({
        stories: [
          storyHit({ title: "Only story", url: undefined, story_text: "Text", num_comments: 0 }),
        ],
      });
      const dir = mkdtempSync(join(tmpdir(), "digest-dev-"));
      dirs.push(dir);
      const dev = join(dir, "dev");
      makeDev(dev);
      const redirected = join(dir, "stdout.txt");
      writeFileSync(redirected, "");
      const inode = statSync(redirected).ino;
      const child = Bun.spawn(
        withPrivateDev(dev, [process.execPath, "scripts/digest.ts", ...args]),
        {
          cwd: ROOT,
          env: {
            ...world.env,
            PATH: process.env.PATH ?? "",
            HOME: dir,
            XDG_CACHE_HOME: dir,
            NO_COLOR: "1",
          },
          stdout: Bun.file(redirected),
          stderr: "pipe",
        },
      );
      const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
      // The same file the shell opened: written through the descriptor, not replaced by a rename.
      expect(statSync(redirected).ino).toBe(inode);
      return { code, stderr, stdout: readFileSync(redirected, "utf8"), dev };
    }

    test("--out /dev/stdout writes to the redirected file and leaves /dev/stdout a link", async () => {
      const { code, stdout, stderr, dev } = await runWithDev(["--out", "/dev/stdout"]);
      expect(stderr).toContain("Digest of 1 story in");
      expect(code).toBe(0);
      expect(stdout).toStartWith("# Hacker News digest\n");
      expect(stdout).toContain("Summary of the article of Only story.");
      expect(readlinkSync(join(dev, "stdout"))).toBe("/proc/self/fd/1");
      expect(readdirSync(dev).sort()).toEqual(DEV_NAMES);
    });

    test("--out /dev/stderr writes the digest to standard error, nothing to stdout", async () => {
      const { code, stdout, stderr, dev } = await runWithDev(["--out", "/dev/stderr"]);
      expect(code).toBe(0);
      expect(stdout).toBe("");
      expect(stderr).toContain("# Hacker News digest\n");
      expect(readlinkSync(join(dev, "stderr"))).toBe("/proc/self/fd/2");
      expect(readdirSync(dev).sort()).toEqual(DEV_NAMES);
    });

    test("--out /dev/null is refused with exit 2 and left as it was", async () => {
      const { code, stdout, stderr, dev } = await runWithDev(["--out", "/dev/null"]);
      expect(code).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toContain(
        "--out /dev/null is in /dev, where only /dev/stdout and /dev/stderr",
      );
      expect(lstatSync(join(dev, "null")).isCharacterDevice()).toBe(true);
      expect(readdirSync(dev).sort()).toEqual(DEV_NAMES);
    });
  },
);
