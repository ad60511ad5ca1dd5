import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { UsageError } from "../../../lib/config/errors.ts";
import {
  openOutput,
  removeStaleTemporaries,
  STALE_TEMPORARY_MS,
  temporaryPath,
  writeFileAtomic,
} from "../../../lib/digest/render/output.ts";
import { tempDirs } from "../../fakes/temp-dirs.ts";

const tempDir = tempDirs("digest-out-");

const noStdout = { write() {} };

/** What `name` reads, after checking it is all `dir` holds (no temporary file stayed). */
function onlyFile(dir: string, name: string): string {
  expect(readdirSync(dir)).toEqual([name]);
  return readFileSync(join(dir, name), "utf8");
}

describe("openOutput()", () => {
  test("writes a hidden temporary file beside the target and renames it on commit", async () => {
    const dir = tempDir();
    const target = join(dir, "digest.md");
    const output = await openOutput(target, noStdout);
    await output.write("# Digest\n");
    const [temporary] = readdirSync(dir);
    expect(temporary).toMatch(/^\.digest\.md\.[0-9a-f]{12}\.tmp$/);
    await output.commit();
    expect(onlyFile(dir, "digest.md")).toBe("# Digest\n");
  });

  test("leaves the old file as it was and no temporary file on abort", async () => {
    const dir = tempDir();
    const target = join(dir, "digest.md");
    writeFileSync(target, "yesterday");
    const output = await openOutput(target, noStdout);
    await output.write("half of today");
    await output.abort();
    expect(onlyFile(dir, "digest.md")).toBe("yesterday");
  });

  test("follows a symlink to a regular file: the file is replaced, the link stays a link", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "www"));
    const real = join(dir, "www", "digest.md");
    writeFileSync(real, "yesterday");
    const target = join(dir, "digest.md");
    symlinkSync(real, target);
    const output = await openOutput(target, noStdout);
    await output.write("today");
    // The temporary file is beside the real file, so the rename stays on its file system.
    expect(readdirSync(join(dir, "www"))).toHaveLength(2);
    await output.commit();
    expect(readFileSync(real, "utf8")).toBe("today");
    expect(lstatSync(target).isSymbolicLink()).toBe(true);
    expect(readlinkSync(target)).toBe(real);
    expect(readdirSync(join(dir, "www"))).toEqual(["digest.md"]);
  });

  test("refuses a dangling symlink and a symlink to a device or folder, and leaves them", async () => {
    const dir = tempDir();
    const links: Array<[string, string, string]> = [
      ["dangling", join(dir, "missing.md"), "is a symlink to nothing (a dangling link)"],
      ["to-folder", dir, `is a symlink to ${dir}, a directory, not a regular file`],
    ];
    for (const [name, to, why] of links) {
      const link = join(dir, name);
      symlinkSync(to, link);
      const error = await openOutput(link, noStdout).catch((caught: Error) => caught);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toBe(
        `--out ${link} ${why}: expected a file path (or - for stdout)`,
      );
      expect(readlinkSync(link)).toBe(to);
    }
    expect(readdirSync(dir).sort()).toEqual(["dangling", "to-folder"]);
  });

  test("without a path, the text goes to the stdout sink", async () => {
    const written: string[] = [];
    const output = await openOutput(undefined, { write: (text) => written.push(text) });
    expect(output.stream).toBe("stdout");
    await output.write("# Digest\n");
    await output.commit();
    expect(written).toEqual(["# Digest\n"]);
  });

  test("never writes through a file or symlink already at the temporary name", async () => {
    const dir = tempDir();
    const victim = join(dir, "victim.txt");
    writeFileSync(victim, "precious");
    const planted = join(dir, ".digest.md.planted.tmp");
    symlinkSync(victim, planted);
    const names = [planted, join(dir, ".digest.md.fresh.tmp")];
    const output = await openOutput(join(dir, "digest.md"), noStdout, {
      temporaryPath: () => names.shift() ?? "",
    });
    await output.write("digest");
    await output.commit();
    expect(readFileSync(victim, "utf8")).toBe("precious");
    expect(readFileSync(join(dir, "digest.md"), "utf8")).toBe("digest");
  });

  test("temporaryPath() is new each time, so it cannot be planted in advance", () => {
    const names = new Set(Array.from({ length: 50 }, () => temporaryPath("/x/digest.md")));
    expect(names.size).toBe(50);
    for (const name of names) expect(name).toStartWith("/x/.digest.md.");
  });
});

describe("permissions of a replaced file", () => {
  test("openOutput() and writeFileAtomic() keep a private file private (0600), a new one 0644 by umask", async () => {
    const dir = tempDir();
    const digest = join(dir, "digest.md");
    writeFileSync(digest, "old", { mode: 0o600 });
    chmodSync(digest, 0o600);
    const output = await openOutput(digest, { write: async () => {} });
    await output.write("new digest");
    await output.commit();
    expect(statSync(digest).mode & 0o777).toBe(0o600);
    const feed = join(dir, "feed.xml");
    writeFileSync(feed, "old");
    chmodSync(feed, 0o640);
    await writeFileAtomic(feed, "new feed");
    expect(statSync(feed).mode & 0o777).toBe(0o640);
    expect(readFileSync(feed, "utf8")).toBe("new feed");
    const fresh = join(dir, "fresh.xml");
    await writeFileAtomic(fresh, "x");
    expect(statSync(fresh).mode & 0o777).toBe(0o644 & ~process.umask());
  });
});

describe("writeFileAtomic()", () => {
  test("replaces a file whole, through a temporary file that does not stay behind", async () => {
    const dir = tempDir();
    const target = join(dir, "feed.xml");
    writeFileSync(target, "old");
    await writeFileAtomic(target, "new feed");
    expect(onlyFile(dir, "feed.xml")).toBe("new feed");
  });

  test("follows a symlink to a regular file: the file is replaced, the link stays a link", async () => {
    const dir = tempDir();
    const real = join(dir, "published.html");
    writeFileSync(real, "old index");
    const target = join(dir, "index.html");
    symlinkSync(real, target);
    await writeFileAtomic(target, "index");
    expect(readFileSync(real, "utf8")).toBe("index");
    expect(readlinkSync(target)).toBe(real);
    expect(readdirSync(dir).sort()).toEqual(["index.html", "published.html"]);
  });

  test("refuses a dangling symlink, naming the file, and leaves it", async () => {
    const dir = tempDir();
    const target = join(dir, "feed.xml");
    symlinkSync(join(dir, "elsewhere.xml"), target);
    const error = await writeFileAtomic(target, "feed").catch((caught: Error) => caught);
    expect((error as Error).message).toBe(`${target} is a symlink to nothing (a dangling link)`);
    expect(readdirSync(dir)).toEqual(["feed.xml"]);
    expect(readlinkSync(target)).toBe(join(dir, "elsewhere.xml"));
  });

  test("refuses a file or symlink planted at its temporary name, and changes nothing", async () => {
    const dir = tempDir();
    const victim = join(dir, "victim.txt");
    writeFileSync(victim, "precious");
    const planted = join(dir, ".feed.xml.planted.tmp");
    symlinkSync(victim, planted);
    const target = join(dir, "feed.xml");
    writeFileSync(target, "old");
    const error = await writeFileAtomic(target, "new", { temporaryPath: () => planted }).catch(
      (caught: NodeJS.ErrnoException) => caught,
    );
    expect((error as NodeJS.ErrnoException).code).toBe("EEXIST");
    expect(readFileSync(victim, "utf8")).toBe("precious");
    expect(readFileSync(target, "utf8")).toBe("old");
  });
});

describe("removeStaleTemporaries()", () => {
  /** A file whose modification time is `ageMs` in the past. */
  function fileAged(dir: string, name: string, ageMs: number): void {
    writeFileSync(join(dir, name), "half a digest");
    const at = (Date.now() - ageMs) / 1000;
    utimesSync(join(dir, name), at, at);
  }

  test("removes temporary files a killed run left over an hour ago, and nothing else", async () => {
    const dir = tempDir();
    const old = STALE_TEMPORARY_MS + 60_000;
    fileAged(dir, ".feed.xml.0123456789ab.tmp", old);
    fileAged(dir, ".2026-11-24.html.abcdef012345.tmp", old);
    fileAged(dir, ".index.html.fedcba987654.tmp", 60_000);
    fileAged(dir, ".notes.tmp", old);
    fileAged(dir, "2026-11-24.html", old);
    await removeStaleTemporaries(dir);
    expect(readdirSync(dir).sort()).toEqual([
      ".index.html.fedcba987654.tmp",
      ".notes.tmp",
      "2026-11-24.html",
    ]);
  });

  test("with `of`, only that file's; openOutput() clears its own target's", async () => {
    const dir = tempDir();
    const old = STALE_TEMPORARY_MS + 60_000;
    fileAged(dir, ".digest.md.0123456789ab.tmp", old);
    fileAged(dir, ".other.md.0123456789ab.tmp", old);
    const output = await openOutput(join(dir, "digest.md"), noStdout);
    await output.commit();
    expect(readdirSync(dir).sort()).toEqual([".other.md.0123456789ab.tmp", "digest.md"]);
  });
});
