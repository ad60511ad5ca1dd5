import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { EventEmitter } from "node:events";
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { runCommand } from "citty";
import { UsageError } from "../../lib/config/errors.ts";
import { createDigestCommand } from "../../lib/digest/command.ts";
import { ModelGoneError } from "../../lib/digest/digest.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { startDigestWorld } from "../fakes/digest-world.ts";
import { textPosts } from "../fakes/hn-search.ts";
import { echoTitle } from "../fakes/ollama.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

setDefaultTimeout(30_000);

const tempDir = tempDirs("digest-trust-");

async function digest(
  world: ReturnType<typeof startDigestWorld>,
  rawArgs: string[],
  signals = new EventEmitter(),
) {
  const stdout: string[] = [];
  let error: unknown;
  try {
    await runCommand(
      createDigestCommand({
        env: { ...world.env, XDG_CACHE_HOME: tempDir() },
        stdout: { write: (text: string) => stdout.push(text) },
        stderr: { isTTY: false, write: () => {} },
        logger: createMemoryLogger(),
        sleep: async () => {},
        timeZone: "UTC",
        signals: { source: signals },
      }),
      { rawArgs },
    );
  } catch (caught) {
    error = caught;
  }
  return { stdout: stdout.join(""), error };
}

/** What a test can see of a path without opening it: its kind, mode, size, device, inode. */
function identity(path: string) {
  const info = lstatSync(path);
  return { mode: info.mode, size: info.size, ino: info.ino, rdev: info.rdev, mtime: info.mtimeMs };
}

describe("--out", () => {
  test("--out - writes the digest to standard output", async () => {
    using world = startDigestWorld({ stories: textPosts(1) });
    const { stdout, error } = await digest(world, ["--out", "-"]);
    expect(error).toBeUndefined();
    expect(stdout).toContain("**Post.** Summary of the article of Post 1.");
  });

  const targets: Array<[string, (dir: string) => string, string, boolean]> = [
    [
      "a FIFO",
      (dir) => {
        const path = join(dir, "pipe");
        Bun.spawnSync(["mkfifo", path]);
        return path;
      },
      "a FIFO",
      true,
    ],
    [
      "a directory",
      (dir) => {
        const path = join(dir, "folder");
        mkdirSync(path);
        writeFileSync(join(path, "inside.txt"), "kept");
        return path;
      },
      "a directory",
      true,
    ],
    [
      "a character device made with mknod",
      (dir) => {
        // The null device's numbers (1, 3): writing to it would lose nothing, replacing it would.
        const path = join(dir, "null");
        Bun.spawnSync(["mknod", path, "c", "1", "3"]);
        return path;
      },
      "a character device",
      process.getuid?.() === 0,
    ],
  ];
  for (const [name, make, kind, runs] of targets) {
    test.skipIf(!runs)(
      `--out at ${name} is refused with exit 2 before any request, and left as it was`,
      async () => {
        using world = startDigestWorld({ stories: textPosts(1) });
        const dir = tempDir();
        const path = make(dir);
        const before = identity(path);
        const { error, stdout } = await digest(world, ["--out", path]);
        expect(error).toBeInstanceOf(UsageError);
        expect((error as Error).message).toBe(
          `--out ${path} is ${kind}, not a regular file: expected a file path (or - for stdout)`,
        );
        expect(identity(path)).toEqual(before);
        expect(stdout).toBe("");
        expect(world.search.requests).toEqual([]);
        expect(world.ollama.generateCalls).toEqual([]);
        // No temporary file beside it either.
        expect(readdirSync(dir).filter((file) => file.endsWith(".tmp"))).toEqual([]);
        if (statSync(path).isDirectory()) expect(readdirSync(path)).toEqual(["inside.txt"]);
      },
    );
  }
});

describe("--out through a symlink", () => {
  test("a symlink to a regular file: the file gets the digest, the link stays a link", async () => {
    using world = startDigestWorld({ stories: textPosts(1) });
    const dir = tempDir();
    const real = join(dir, "published.md");
    writeFileSync(real, "yesterday");
    const link = join(dir, "digest.md");
    symlinkSync(real, link);
    const { error, stdout } = await digest(world, ["--out", link]);
    expect(error).toBeUndefined();
    expect(stdout).toBe("");
    expect(readFileSync(real, "utf8")).toContain("Summary of the article of Post 1.");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(real);
    expect(readdirSync(dir).sort()).toEqual(["digest.md", "published.md"]);
  });

  const links: Array<[string, (dir: string) => string, (target: string) => string, boolean]> = [
    [
      "a dangling symlink",
      (dir) => join(dir, "missing.md"),
      () => "is a symlink to nothing (a dangling link)",
      true,
    ],
    [
      "a symlink to a character device",
      (dir) => {
        const device = join(dir, "null");
        Bun.spawnSync(["mknod", device, "c", "1", "3"]);
        return device;
      },
      (target) => `is a symlink to ${target}, a character device, not a regular file`,
      process.getuid?.() === 0,
    ],
  ];
  for (const [name, make, why, runs] of links) {
    test.skipIf(!runs)(`${name} is refused before any request, and left as it was`, async () => {
      using world = startDigestWorld({ stories: textPosts(1) });
      const dir = tempDir();
      const target = make(dir);
      const link = join(dir, "digest.md");
      symlinkSync(target, link);
      const before = readdirSync(dir).sort();
      const { error, stdout } = await digest(world, ["--out", link]);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toBe(
        `--out ${link} ${why(target)}: expected a file path (or - for stdout)`,
      );
      expect(readlinkSync(link)).toBe(target);
      expect(readdirSync(dir).sort()).toEqual(before);
      expect(stdout).toBe("");
      expect(world.search.requests).toEqual([]);
    });
  }
});

describe("a run that stops early", () => {
  /**
   * Two answers, then the model is gone: the third failure in a row (story 5) stops the run,
   * after stories 3 and 4 were written with their failure notes.
   */
  const goneAfterTwo = {
    generate: (body: Parameters<typeof echoTitle>[0], call: number) =>
      call <= 2
        ? echoTitle(body)
        : Response.json({ error: `model '${body.model}' not found` }, { status: 404 }),
  };

  test("Markdown on stdout ends with the stories it holds, of how many", async () => {
    using world = startDigestWorld({ stories: textPosts(6), ollama: goneAfterTwo });
    const { stdout, error } = await digest(world, []);
    expect(error).toBeInstanceOf(ModelGoneError);
    expect(stdout).toContain("## 4. Post 4");
    expect(stdout).not.toContain("## 5.");
    expect(stdout).toEndWith("\n---\n\n_incomplete: 4 of 6 stories_\n");
  });

  test("JSON on stdout says so in its last field", async () => {
    using world = startDigestWorld({ stories: textPosts(6), ollama: goneAfterTwo });
    const { stdout, error } = await digest(world, ["--format", "json"]);
    expect(error).toBeInstanceOf(ModelGoneError);
    const document = JSON.parse(stdout);
    expect(document.stories.map((story: { title: string }) => story.title)).toEqual([
      "Post 1",
      "Post 2",
      "Post 3",
      "Post 4",
    ]);
    expect(Object.entries(document).at(-1)).toEqual(["incomplete", "incomplete: 4 of 6 stories"]);
  });

  test("the HTML page ends its stories with the count", async () => {
    using world = startDigestWorld({ stories: textPosts(6), ollama: goneAfterTwo });
    const { stdout, error } = await digest(world, ["--format", "html"]);
    expect(error).toBeInstanceOf(ModelGoneError);
    expect(stdout).toContain(
      '<p class="incomplete"><strong>incomplete: 4 of 6 stories</strong></p>\n</main>',
    );
  });

  test("Ctrl-C after three stories: the Markdown on stdout ends with 3 of 5", async () => {
    const signals = new EventEmitter();
    using world = startDigestWorld({
      stories: textPosts(5),
      ollama: {
        generate: (body, call) => {
          if (call === 4) signals.emit("SIGINT");
          return echoTitle(body);
        },
      },
    });
    const { stdout, error } = await digest(world, [], signals);
    expect(error).toBeUndefined();
    expect(stdout).toContain("## 3. Post 3");
    expect(stdout).not.toContain("## 4.");
    expect(stdout).toEndWith("\n---\n\n_incomplete: 3 of 5 stories_\n");
  });

  test("a complete run says nothing of the kind", async () => {
    using world = startDigestWorld({ stories: textPosts(2) });
    const markdown = await digest(world, []);
    expect(markdown.stdout).not.toContain("incomplete");
    const json = await digest(world, ["--format", "json"]);
    expect(JSON.parse(json.stdout).incomplete).toBeNull();
  });
});
