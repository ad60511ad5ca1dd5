/** The pure parts of the architecture test: layers, imports, cycles and SQL detection. */

export interface Layer {
  name: string;
  /** Higher ranks may import lower ones (and their own), never the reverse. */
  rank: number;
}

/** Bottom up. A path belongs to the first entry whose prefix it starts with. */
const LAYERS: ReadonlyArray<[prefix: string, layer: Layer]> = [
  ["lib/config/", { name: "shared", rank: 0 }],
  ["lib/http/", { name: "shared", rank: 0 }],
  ["lib/cli/", { name: "shared", rank: 0 }],
  ["lib/async/", { name: "shared", rank: 0 }],
  ["lib/text/", { name: "shared", rank: 0 }],
  ["lib/files/", { name: "shared", rank: 0 }],
  ["lib/log.ts", { name: "shared", rank: 0 }],
  ["lib/log-format.ts", { name: "shared", rank: 0 }],
  ["lib/secrets.ts", { name: "shared", rank: 0 }],
  ["lib/version.ts", { name: "shared", rank: 0 }],
  ["lib/types/", { name: "shared", rank: 0 }],
  ["lib/webhooks/", { name: "domain", rank: 1 }],
  ["lib/inventory/", { name: "domain", rank: 1 }],
  ["lib/store/", { name: "storage", rank: 2 }],
  ["lib/worker/", { name: "process", rank: 3 }],
  ["lib/webhooks-cli/", { name: "process", rank: 3 }],
  ["lib/app/", { name: "process", rank: 3 }],
  ["lib/receiver/", { name: "process", rank: 3 }],
  ["lib/digest/", { name: "process", rank: 3 }],
  ["lib/demo/", { name: "composition", rank: 4 }],
];

export function layerOf(path: string): Layer | null {
  for (const [prefix, layer] of LAYERS) if (path.startsWith(prefix)) return layer;
  return null;
}

/** Every module specifier a file imports or re-exports, `import type` and dynamic imports included. */
export function importsOf(source: string): string[] {
  const specifiers: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^;]*?\sfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns) {
    for (const match of source.matchAll(pattern)) if (match[1]) specifiers.push(match[1]);
  }
  return specifiers;
}

/** Strongly connected components with more than one file, or a file importing itself (Tarjan). */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];

  function visit(node: string): void {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    const selfLoop = component.length === 1 && (graph.get(node) ?? []).includes(node);
    if (component.length > 1 || selfLoop) cycles.push(component.sort());
  }

  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

/** A lib path's top-level folder (`lib/webhooks/x/y.ts` → `lib/webhooks`), or the file itself at lib's top. */
export function folderOf(path: string): string {
  const parts = path.split("/");
  return parts.length > 2 ? parts.slice(0, 2).join("/") : path;
}

/** The file graph seen from above: folder → the other folders its files import. */
export function folderGraph(graph: ReadonlyMap<string, readonly string[]>): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    const out = folders.get(from) ?? new Set<string>();
    folders.set(from, out);
    for (const target of targets) if (folderOf(target) !== from) out.add(folderOf(target));
  }
  return new Map([...folders].map(([folder, targets]) => [folder, [...targets].sort()]));
}

const SQL_STATEMENT =
  /\b(SELECT\s+(?:[\w*"(]|DISTINCT)|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX)|ALTER\s+TABLE|PRAGMA\s+\w+|BEGIN\s+IMMEDIATE|LISTEN\s+\w+|NOTIFY\s+\w+)/g;

/** A source file without its comments: the rules check code, not prose about it. */
export function codeOf(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|\s)\/\/.*$/gm, "$1");
}

/** SQL statements written in a source file's code. */
export function sqlStatementsIn(source: string): string[] {
  return [...codeOf(source).matchAll(SQL_STATEMENT)].map((match) => match[1] ?? "");
}

/**
 * Whether code reads the environment. Handing it on whole to a child process (`...process.env`
 * in a spawn's env) is inheritance, not a read of settings.
 */
export function readsEnvironment(source: string): boolean {
  return /process\.env\b/.test(codeOf(source).replace(/\.\.\.process\.env\b(?![.[])/g, ""));
}
