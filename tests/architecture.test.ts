/**
 * The layout's rules, checked on the source text (ARCHITECTURE.md explains them): the layers only
 * import downwards, there are no import cycles (type-only imports count), SQL lives in the
 * storage layer, lib files stay small, only entry points read process.env, and lib never exits.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { functionLengths } from "./architecture/function-lengths.ts";
import {
  findCycles,
  folderGraph,
  importsOf,
  layerOf,
  readsEnvironment,
  sqlStatementsIn,
} from "./architecture/rules.ts";

const ROOT = join(import.meta.dir, "..");
/** The longest a lib function may be; split where the parts have names. */
const MAX_FUNCTION_LINES = 150;

function sourceFiles(folder: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, folder))) {
    const path = join(folder, name);
    if (statSync(join(ROOT, path)).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name)) out.push(path);
  }
  return out;
}

const libFiles = sourceFiles("lib");
const text = new Map(libFiles.map((file) => [file, readFileSync(join(ROOT, file), "utf8")]));

/** lib file → the lib files it imports (relative specifiers resolved). */
const graph = new Map(
  libFiles.map((file) => [
    file,
    importsOf(text.get(file) ?? "")
      .filter((specifier) => specifier.startsWith("."))
      .map((specifier) => relative(ROOT, resolve(ROOT, dirname(file), specifier))),
  ]),
);

describe("architecture", () => {
  test("lib has no import cycles, type-only imports included", () => {
    expect(findCycles(graph)).toEqual([]);
  });

  test("no circle between lib's top-level folders: one folder's files never import back", () => {
    expect(findCycles(folderGraph(graph))).toEqual([]);
  });

  test("every lib file belongs to a layer", () => {
    expect(libFiles.filter((file) => layerOf(file) === null)).toEqual([]);
  });

  test("no lib file imports from a layer above its own", () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      for (const target of targets) {
        const from = layerOf(file);
        const to = layerOf(target);
        if (from !== null && to !== null && to.rank > from.rank) {
          upward.push(`${file} (${from.name}) imports ${target} (${to.name})`);
        }
      }
    }
    expect(upward).toEqual([]);
  });

  test("SQL appears only in the storage layer and the digest's cache", () => {
    const outside = libFiles
      .filter((file) => !file.startsWith("lib/store/") && file !== "lib/digest/summarise/cache.ts")
      .flatMap((file) => sqlStatementsIn(text.get(file) ?? "").map((sql) => `${file}: ${sql}`));
    expect(outside).toEqual([]);
  });

  test("no lib file is over 400 lines", () => {
    const long = libFiles
      .map((file) => ({ file, lines: (text.get(file) ?? "").split("\n").length }))
      .filter(({ lines }) => lines > 400)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(long).toEqual([]);
  });

  test("no lib function is over 150 lines (measured on the TypeScript compiler's parse)", async () => {
    const long = (await functionLengths(ROOT, libFiles))
      .filter(({ lines }) => lines > MAX_FUNCTION_LINES)
      .map(({ file, name, line, lines }) => `${file}:${line} ${name}: ${lines} lines`);
    expect(long).toEqual([]);
  }, 60_000);

  test("only entry points read process.env", () => {
    const readers = [...libFiles, ...sourceFiles("bench")].filter(
      (file) =>
        !BENCH_ENTRIES.has(file) && readsEnvironment(readFileSync(join(ROOT, file), "utf8")),
    );
    expect(readers).toEqual([]);
  });

  test("no folder in lib holds more than 20 source files directly (a prefix doing a folder's job)", () => {
    const perFolder = new Map<string, number>();
    for (const file of libFiles)
      perFolder.set(dirname(file), (perFolder.get(dirname(file)) ?? 0) + 1);
    const crowded = [...perFolder]
      .filter(([, count]) => count > 20)
      .map(([folder, count]) => `${folder}: ${count} files`);
    expect(crowded).toEqual([]);
  });

  test("lib never calls process.exit", () => {
    expect(libFiles.filter((file) => /process\.exit\s*\(/.test(text.get(file) ?? ""))).toEqual([]);
  });

  // Bun reads tsconfig.json's jsxImportSource from the working directory, not the file's
  // folder: without the pragma a command started elsewhere (a service unit) looks for React.
  test("every lib .tsx file names its JSX runtime itself", () => {
    const bare = libFiles.filter(
      (file) =>
        file.endsWith(".tsx") && !text.get(file)?.startsWith("/** @jsxImportSource hono/jsx */"),
    );
    expect(bare).toEqual([]);
  });

  test("ARCHITECTURE.md names every lib file", () => {
    const named = architecturePaths();
    expect(libFiles.filter((file) => !named.has(file))).toEqual([]);
  });

  test("every path ARCHITECTURE.md names exists", () => {
    const missing = [...architecturePaths()].filter((path) => !existsSync(join(ROOT, path)));
    expect(missing).toEqual([]);
  });

  test("every path the README and docs/ name exists", () => {
    const docs = ["README.md", ...readdirSync(join(ROOT, "docs")).map((name) => `docs/${name}`)];
    const missing = docs.flatMap((doc) =>
      [...architecturePaths(doc)]
        .filter((path) => !existsSync(join(ROOT, path)))
        .map((path) => `${doc}: ${path}`),
    );
    expect(missing).toEqual([]);
  });

  test("entry scripts are wiring: at most 30 lines each", () => {
    const long = sourceFiles("scripts")
      .map((file) => ({
        file,
        lines: readFileSync(join(ROOT, file), "utf8").trimEnd().split("\n").length,
      }))
      .filter(({ lines }) => lines > 30)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(long).toEqual([]);
  });
});

/**
 * Every repository path ARCHITECTURE.md names under lib/, scripts/, bench/ or tests/ (files and
 * folders), as written: `lib/webhooks/delivery/loop.ts`, `lib/store/`. A placeholder such as
 * `lib/store/<backend>/items.ts` names only the folder before it.
 */
function architecturePaths(file = "ARCHITECTURE.md"): Set<string> {
  const doc = readFileSync(join(ROOT, file), "utf8");
  const paths = doc.match(/(?<![\w./-])(?:lib|scripts|bench|tests)\/[\w./-]*/g) ?? [];
  return new Set(paths.map((path) => path.replace(/\.+$/, "")));
}

/** The benchmarks' entry points (package.json's bench:* scripts) parse BENCH_* once. */
const BENCH_ENTRIES = new Set(
  Object.entries(
    (await Bun.file(join(ROOT, "package.json")).json()).scripts as Record<string, string>,
  )
    .filter(([name]) => name.startsWith("bench:"))
    .map(([, command]) => command.replace(/^bun\s+/, "")),
);
