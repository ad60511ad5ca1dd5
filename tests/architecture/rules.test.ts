import { describe, expect, test } from "bun:test";
import * as rules from "./rules.ts";

describe("findCycles()", () => {
  test("finds a three-file cycle and a self-import, not a diamond", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["d"]],
      ["top", ["left", "right"]],
      ["left", ["bottom"]],
      ["right", ["bottom"]],
      ["bottom", []],
    ]);
    expect(rules.findCycles(graph)).toEqual([["a", "b", "c"], ["d"]]);
  });
});

describe("folderGraph()", () => {
  test("joins files into their top-level lib folders, so a circle between folders is a cycle", () => {
    const graph = new Map([
      ["lib/inventory/changes.ts", ["lib/webhooks/ports.ts", "lib/inventory/model.ts"]],
      ["lib/inventory/model.ts", []],
      ["lib/webhooks/ports.ts", ["lib/webhooks/model.ts"]],
      ["lib/webhooks/model.ts", []],
      ["lib/webhooks/events/catalogue.ts", ["lib/inventory/model.ts", "lib/log.ts"]],
      ["lib/log.ts", []],
    ]);
    const folders = rules.folderGraph(graph);
    expect(folders.get("lib/webhooks")).toEqual(["lib/inventory", "lib/log.ts"]);
    expect(folders.get("lib/inventory")).toEqual(["lib/webhooks"]);
    expect(rules.findCycles(folders)).toEqual([["lib/inventory", "lib/webhooks"]]);
    expect(rules.findCycles(graph)).toEqual([]);
  });
});

describe("importsOf()", () => {
  test("reads value, type-only, side-effect, re-export and dynamic imports", () => {
    const source = [
      'import { a } from "./a.ts";',
      'import type {\n  B,\n} from "../b.ts";',
      'import "./side.ts";',
      'export { c } from "./c.ts";',
      'const d = await import("./d.ts");',
    ].join("\n");
    expect(rules.importsOf(source).sort()).toEqual([
      "../b.ts",
      "./a.ts",
      "./c.ts",
      "./d.ts",
      "./side.ts",
    ]);
  });
});

describe("layerOf()", () => {
  test("ranks shared below domain below storage below processes", () => {
    const ranks = [
      "lib/config/env.ts",
      "lib/webhooks/model.ts",
      "lib/store/open.ts",
      "lib/worker/bind.ts",
    ].map((path) => rules.layerOf(path)?.rank);
    expect(ranks).toEqual([0, 1, 2, 3]);
    expect(rules.layerOf("lib/somewhere-new/x.ts")).toBeNull();
  });
});

describe("sqlStatementsIn()", () => {
  test("finds statements in code and ignores them in comments", () => {
    const source = [
      "// SELECT * FROM deliveries is how it used to be done",
      "/** UPDATE deliveries SET state = 'x' in prose */",
      'const stmt = db.prepare("SELECT id FROM deliveries WHERE state = ?");',
      "const sql = `DELETE FROM attempts WHERE id = 1`;",
      'const url = "http://example.com/select";',
    ].join("\n");
    expect(rules.sqlStatementsIn(source)).toEqual(["SELECT i", "DELETE FROM"]);
  });
});

describe("readsEnvironment()", () => {
  test("counts property reads and hand-offs, not a spread into a child's environment", () => {
    expect(rules.readsEnvironment("const n = process.env.BENCH_N;")).toBe(true);
    expect(rules.readsEnvironment("await main(process.env);")).toBe(true);
    expect(rules.readsEnvironment('const x = process.env["A"];')).toBe(true);
    expect(rules.readsEnvironment("Bun.spawn(cmd, { env: { ...process.env, A: '1' } });")).toBe(
      false,
    );
    expect(rules.readsEnvironment("// process.env.X is read by the script")).toBe(false);
  });
});
