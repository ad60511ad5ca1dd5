import { type ArgsDef, type CommandDef, defineCommand } from "citty";
import type { Env } from "../config/env.ts";
import { UsageError } from "../config/errors.ts";
import { VERSION } from "../version.ts";
import { DEFAULT_MODEL, type DigestFlags, FIELDS, loadDigestConfig } from "./config.ts";
import { type DigestDeps, type DigestResult, runDigest } from "./digest.ts";

const ALIASES: Record<string, string> = {
  limit: "n",
  format: "f",
  out: "o",
  model: "m",
  concurrency: "c",
};

/** The citty arguments, written from the config fields so help and parsing cannot drift. */
export function digestArgs(): ArgsDef {
  const args: ArgsDef = {};
  for (const field of FIELDS) {
    const where = [
      field.env ? `env ${field.env}` : undefined,
      field.default !== undefined ? `default ${field.default}` : undefined,
    ].filter(Boolean);
    // No citty `default`: a defaulted flag would always be "given" and override the env var.
    args[field.flag] = {
      type: "string",
      description: `${field.description}${where.length > 0 ? ` [${where.join(", ")}]` : ""}`,
      valueHint: field.hint,
      alias: ALIASES[field.flag],
    };
  }
  args.cache = {
    type: "boolean",
    default: true,
    description: "reuse summaries cached in $XDG_CACHE_HOME/hn-digest (default ~/.cache)",
    negativeDescription: "neither read nor write the summary cache",
  };
  return args;
}

const DESCRIPTION = [
  "Summarise the Hacker News front page with a local Ollama: for each story, its article and its discussion.",
  `Needs Ollama running (\`ollama serve\`) with the model pulled (\`ollama pull ${DEFAULT_MODEL}\`).`,
  "Flags override the env vars named in brackets. Markdown goes to stdout, logs and progress to stderr.",
  "Exit codes: 0 done, 1 failed (Ollama unusable, front page unreadable, every summary failed), 2 bad flag or env value.",
].join("\n");

export interface DigestCommandDeps extends DigestDeps {
  env: Env;
  /** Called with the result, for tests and embedding. */
  onResult?: (result: DigestResult) => void;
}

/** `bun run digest`: parses flags and env, then runs the digest. */
export function createDigestCommand(deps: DigestCommandDeps): CommandDef {
  const args = digestArgs();
  return defineCommand({
    meta: { name: "digest", version: VERSION, description: DESCRIPTION },
    args,
    async run({ args: parsed, rawArgs }) {
      rejectUnknown(rawArgs, args);
      const config = loadDigestConfig(deps.env, parsed as DigestFlags);
      const result = await runDigest(config, deps);
      deps.onResult?.(result);
    },
  });
}

/** citty accepts any flag silently; a typo such as --formt must not be ignored. */
export function rejectUnknown(rawArgs: readonly string[], args: ArgsDef): void {
  const valued = new Set<string>();
  const known = new Set<string>(["help", "h", "version", "v"]);
  for (const [name, def] of Object.entries(args)) {
    const aliases = "alias" in def && def.alias !== undefined ? [def.alias].flat() : [];
    for (const alias of [name, ...aliases]) {
      known.add(alias);
      if (def.type === "boolean") known.add(`no-${alias}`);
      else valued.add(alias);
    }
  }
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i] ?? "";
    if (token === "--") break;
    if (!token.startsWith("-") || token === "-") {
      throw new UsageError(
        `Unexpected argument ${JSON.stringify(token)}: the digest takes only options (see --help)`,
      );
    }
    const name = kebab(token.replace(/^--?/, "").split("=")[0] ?? "");
    if (!known.has(name)) {
      throw new UsageError(`Unknown option ${token.split("=")[0]} (see --help)`);
    }
    if (valued.has(name) && !token.includes("=")) i++;
  }
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (ch) => `-${ch.toLowerCase()}`);
}
