import { createRequire } from "node:module";
import { errorMessage } from "../../text/error-message.ts";
import { withMemoryLimit } from "./wasm-memory-limit.ts";

/**
 * Jinja2 templates for webhook bodies, URLs and header values, rendered by MiniJinja (Jinja2's
 * author's Rust implementation, compiled to WebAssembly: `minijinja-js`). Chosen over nunjucks,
 * which runs templates as JavaScript with no sandbox (`{{ range.constructor("…")() }}` runs
 * code), and over @huggingface/jinja, whose errors carry no line or column. MiniJinja has no
 * access to anything but the context, no autoescaping for our template names (as Jinja2's
 * default environment; `tojson` is the escape for JSON bodies), and a fuel limit on steps.
 * Fuel counts steps, not work (`"x" * 1000000000` is one step), so the engine's memory is capped
 * here and a render's time by the process that runs it (render-process.ts). Templates share one
 * environment, so `include`, `import`, `extends` and `from` are refused: a webhook's template
 * sees its own change and nothing else, the same in every process.
 */

type MiniJinja = typeof import("minijinja-js");
interface Engine {
  env: InstanceType<MiniJinja["Environment"]>;
  memory: WebAssembly.Memory;
  /** Template source → registered name; compiled once, reused for every change. */
  names: Map<string, string>;
  /** The context last handed over as globals (see useContext), and its keys. */
  context: object | null;
  keys: string[];
}

/** Steps one render may take (about 3 ms per 100,000 here): a runaway loop stops, recorded. */
export const TEMPLATE_FUEL = 200_000;
/** A rendered body (or URL, or header value) larger than this is refused. */
export const MAX_RENDERED_BYTES = 1024 * 1024;
const MAX_CACHED_TEMPLATES = 500;
/** The engine's memory at most: an allocation past it fails the render (the instance is replaced). */
export const ENGINE_MEMORY_LIMIT = 64 * 1024 * 1024;
/** WebAssembly memory never shrinks: after a render grew it past this, a fresh instance is made. */
const RECYCLE_ABOVE = 16 * 1024 * 1024;

/** A template that does not parse or render: `line` and `column` are 1-based when known. */
export class TemplateError extends Error {
  override name = "TemplateError";
  constructor(
    readonly reason: string,
    readonly line: number | null,
    readonly column: number | null,
  ) {
    super(
      line === null
        ? reason
        : `line ${line}${column === null ? "" : `, column ${column}`}: ${reason}`,
    );
  }
}

const TEMPLATE_MARK = /\{\{|\{%|\{#/;

/** Whether `text` uses template syntax at all (plain text is sent as it is, never rendered). */
export function isTemplated(text: string): boolean {
  return TEMPLATE_MARK.test(text);
}

/**
 * What can be told of a template on the caller's thread without compiling it: a tag that names
 * another template (refused). The compiler works out constant expressions while it parses
 * (`{% set s = "x" * 10000000 %}` builds 10 MB then), so whether a template parses is asked of
 * the renderer processes, under a deadline (compileProblem there, via template-trial.ts).
 */
export function templateProblem(source: string): TemplateError | null {
  try {
    refuseReferences(source);
    return null;
  } catch (error) {
    return asTemplateError(error);
  }
}

/**
 * Null when `source` compiles; otherwise what is wrong and where. Compiling can take as long
 * and as much memory as its constants: only a renderer process calls this (render-child.ts).
 */
export function compileProblem(source: string): TemplateError | null {
  try {
    withEngine((engine) => nameOf(engine, source));
    return null;
  } catch (error) {
    return asTemplateError(error);
  }
}

/**
 * Renders `source` with `context` (plain JSON values, not changed between renders: the same
 * object is handed to the engine once for all the templates it renders, e.g. a webhook's body,
 * URL and headers, and every webhook's of one change). Throws a TemplateError for a template
 * that does not parse, fails while rendering (unknown filter, undefined attribute of an
 * undefined value, out of fuel) or renders more than MAX_RENDERED_BYTES.
 */
export function renderTemplate(source: string, context: Record<string, unknown>): string {
  let rendered: string;
  try {
    rendered = withEngine((engine) => {
      engine.env.fuel = TEMPLATE_FUEL;
      const name = nameOf(engine, source);
      useContext(engine, context);
      return engine.env.renderTemplate(name, {});
    });
  } catch (error) {
    throw asTemplateError(error);
  }
  // A UTF-16 unit is at most 3 UTF-8 bytes: most results need no encoding to know they fit.
  if (rendered.length * 3 > MAX_RENDERED_BYTES) {
    const bytes = Buffer.byteLength(rendered);
    if (bytes > MAX_RENDERED_BYTES) {
      throw new TemplateError(
        `the result is ${bytes} bytes, more than the ${MAX_RENDERED_BYTES} allowed`,
        null,
        null,
      );
    }
  }
  return rendered;
}

let current: Engine | null = null;

/**
 * Loads the engine now: compiling its WebAssembly takes about 160 ms here, which the app spends
 * at start rather than in the first request whose form has a template to check (changes are
 * rendered in the render process, render-process.ts, which loads its own).
 */
export function prepareTemplateEngine(): void {
  withEngine(() => undefined);
}

function load(): Engine {
  const require = createRequire(import.meta.url);
  const id = require.resolve("minijinja-js");
  // A fresh module is a fresh WebAssembly instance (its state lives in the module scope). The
  // binding compiles its own bytes with `new WebAssembly.Module`: swapped, synchronously, for one
  // that gives the module's memory a maximum first.
  delete require.cache[id];
  const compile = WebAssembly.Module;
  class LimitedModule extends compile {
    constructor(bytes: BufferSource) {
      super(withMemoryLimit(asBytes(bytes), ENGINE_MEMORY_LIMIT));
    }
  }
  let module: MiniJinja & { __wasm: { memory: WebAssembly.Memory } };
  WebAssembly.Module = LimitedModule;
  try {
    module = require(id);
  } finally {
    WebAssembly.Module = compile;
  }
  const env = new module.Environment();
  env.debug = true; // error texts then show the line and a caret under the column
  env.enablePyCompat(); // `data.items()`, `name.upper()` as in Jinja2
  return { env, memory: module.__wasm.memory, names: new Map(), context: null, keys: [] };
}

/**
 * Runs `fn` on the engine. A Rust panic (e.g. a string too large to allocate) leaves the
 * WebAssembly instance unusable, so it is replaced; its panic text, which the binding prints
 * with console.error, becomes the error's message instead.
 */
function withEngine<T>(fn: (engine: Engine) => T): T {
  const engine = current ?? load();
  current = engine;
  const printed: string[] = [];
  const consoleError = console.error;
  console.error = (...args: unknown[]) => {
    printed.push(args.map(String).join(" "));
  };
  try {
    return fn(engine);
  } catch (error) {
    if (error instanceof WebAssembly.RuntimeError) {
      current = null;
      const panic = printed.join("\n").match(/panicked at [^\n]*\n([^\n]+)/)?.[1];
      throw new TemplateError(
        `the template engine failed: ${panic ?? `out of memory (at most ${ENGINE_MEMORY_LIMIT / 1024 / 1024} MiB) or an internal error`}`,
        null,
        null,
      );
    }
    throw error;
  } finally {
    console.error = consoleError;
    if (current === engine && engine.memory.buffer.byteLength > RECYCLE_ABOVE) current = null;
  }
}

/**
 * Hands `context` to the engine as its globals, unless it already holds this very object.
 * Converting a change's context into the engine's values costs about 25 µs (most of a render),
 * so a change rendered for three templates, or for several webhooks, pays it once.
 */
function useContext(engine: Engine, context: Record<string, unknown>): void {
  if (engine.context === context) return;
  engine.context = null; // until every key is in, should a conversion fail midway
  for (const key of engine.keys) {
    if (!Object.hasOwn(context, key)) engine.env.removeGlobal(key);
  }
  for (const [key, value] of Object.entries(context)) engine.env.addGlobal(key, value);
  engine.keys = Object.keys(context);
  engine.context = context;
}

function asBytes(source: BufferSource): Uint8Array<ArrayBuffer> {
  if (ArrayBuffer.isView(source)) {
    return new Uint8Array(source.buffer as ArrayBuffer, source.byteOffset, source.byteLength);
  }
  return new Uint8Array(source);
}

/** A tag that would reach another template of the shared environment. */
const REFERENCE_TAG = /\{%[-+]?\s*(include|import|extends|from)\b/;

/** Refuses a template that names another one (they all share the environment). */
function refuseReferences(source: string): void {
  const found = REFERENCE_TAG.exec(source);
  if (found === null) return;
  const before = source.slice(0, found.index).split("\n");
  throw new TemplateError(
    `${found[1]} is not allowed: a webhook's template sees only its own change (copy what it needs into it)`,
    before.length,
    (before.at(-1)?.length ?? 0) + 1,
  );
}

function nameOf(engine: Engine, source: string): string {
  let name = engine.names.get(source);
  if (name === undefined) {
    refuseReferences(source);
    if (engine.names.size >= MAX_CACHED_TEMPLATES) {
      engine.env.clearTemplates();
      engine.names.clear();
    }
    name = `t${engine.names.size + 1}`;
    engine.env.addTemplate(name, source);
    engine.names.set(source, name);
  }
  return name;
}

/**
 * MiniJinja's message, e.g. "syntax error: unexpected end of block (in t1:2)" followed (in debug
 * mode) by the template's lines, the failing one marked `   2 > …` and under it `     i    ^^`.
 */
function asTemplateError(error: unknown): TemplateError {
  if (error instanceof TemplateError) return error;
  const text = errorMessage(error);
  const [first = text] = text.split("\n");
  const located = /^(.*) \(in t\d+:(\d+)\)$/.exec(first);
  const reason = (located?.[1] ?? first).trim() || "the template could not be rendered";
  const line = located ? Number(located[2]) : null;
  let column: number | null = null;
  const marker = text.split("\n").find((l) => /^ {5}i +\^/.test(l));
  if (marker !== undefined) column = marker.indexOf("^") - 7 + 1;
  return new TemplateError(reason, line, column);
}
