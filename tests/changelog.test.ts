import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };

const ROOT = join(import.meta.dir, "..");
const changelog = readFileSync(join(ROOT, "CHANGELOG.md"), "utf8");
const versions = [...changelog.matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$/gm)];

describe("CHANGELOG.md (Keep a Changelog)", () => {
  test("has the version in package.json as a dated section, below Unreleased", () => {
    expect(versions[0]?.[1]).toBe("Unreleased");
    const current = versions.find((match) => match[1] === pkg.version);
    expect(current?.[2]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  test("lists versions newest first, each once", () => {
    const released = versions.slice(1).map((match) => match[1] ?? "");
    const newestFirst = [...released].sort((a, b) => b.localeCompare(a, "en", { numeric: true }));
    expect(released).toEqual(newestFirst);
    expect(new Set(released).size).toBe(released.length);
  });

  test("package.json names the licence the LICENSE file holds", () => {
    expect(pkg.license).toBe("MIT");
    expect(readFileSync(join(ROOT, "LICENSE"), "utf8")).toStartWith("MIT License\n");
  });
});
