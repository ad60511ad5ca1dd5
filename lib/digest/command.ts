import { type ArgsDef, type CommandDef, defineCommand } from "citty";
import { rejectUnknown } from "../cli/args.ts";
import { helpMeta } from "../cli/help.ts";
import { type StopSignalsOptions, stopSignals } from "../cli/signals.ts";
import type { Env } from "../config/env.ts";
import { fieldArgs, fieldEnvironment } from "../config/fields.ts";
import { fetchThroughProxy, loadProxySetting, withoutEnvironmentProxies } from "../http/proxy.ts";
import { createLogger } from "../log.ts";
import { VERSION } from "../version.ts";
import { DEFAULT_MODEL, type DigestFlags, FIELDS, loadDigestConfig } from "./config.ts";
import { type DigestDeps, DigestInterruptedError, type DigestResult, runDigest } from "./digest.ts";

/** The citty arguments, written from the config fields so help and parsing cannot drift. */
export function digestArgs(): ArgsDef {
  return {
    ...fieldArgs(FIELDS),
    cache: {
      type: "boolean",
      default: true,
      description:
        "reuse summaries cached in $XDG_CACHE_HOME/hn-digest (default ~/.cache) [default on]",
      negativeDescription: "neither read nor write the summary cache",
    },
  };
}

const DESCRIPTION =
  "Summarise the Hacker News front page (and Lobsters', with --source hn,lobsters) with a local model (Ollama, or any OpenAI-compatible server): for each story, its article and its discussion, the comments it draws on linked";

const NOTES = [
  `Needs Ollama running (\`ollama serve\`) with the model pulled (\`ollama pull ${DEFAULT_MODEL}\`), or with --api=openai an OpenAI-compatible server at OPENAI_BASE_URL (\`llama-server -m model.gguf --port 8080\`, LM Studio, vLLM).`,
  "Flags override the variables named in brackets. The digest goes to stdout (or --out), logs and progress to stderr.",
  "Exit codes: 0 done, 1 failed (the model server unusable, front page unreadable, the model gone mid-run, every summary failed), 2 bad flag or variable, 130 interrupted (Ctrl-C).",
];

export interface DigestCommandDeps extends Omit<DigestDeps, "signal"> {
  env: Env;
  /** Called with the result, for tests and embedding. */
  onResult?: (result: DigestResult) => void;
  /** SIGINT/SIGTERM come from here (default: the process); see lib/cli/signals.ts. */
  signals?: StopSignalsOptions;
  /** Told when Ctrl-C stopped the digest (the script exits 130 then). */
  onInterrupted?: () => void;
}

/** `bun run digest`: parses flags and env, then runs the digest. */
export function createDigestCommand(deps: DigestCommandDeps): CommandDef {
  const args = digestArgs();
  return defineCommand({
    meta: helpMeta({
      name: "digest",
      version: VERSION,
      description: DESCRIPTION,
      environment: [
        ...fieldEnvironment(FIELDS),
        {
          name: "DIGEST_PROXY_URL",
          description:
            "http:// or https:// proxy for the digest's requests (user:password@ allowed, never shown); HTTP_PROXY, HTTPS_PROXY and NO_PROXY are not used [default none]",
        },
        {
          name: "DIGEST_NO_PROXY",
          description:
            "comma list of host names (with their subdomains), IPs or CIDR reached directly; loopback always is [default none]",
        },
        {
          name: "XDG_CACHE_HOME",
          description: "where the summary cache lives ($XDG_CACHE_HOME/hn-digest/summaries.sqlite)",
        },
      ],
      notes: NOTES,
    }),
    args,
    async run({ args: parsed, rawArgs }) {
      rejectUnknown(rawArgs, args);
      // Bun's fetch would read these on every request by itself: only DIGEST_PROXY_URL counts.
      const ignored = withoutEnvironmentProxies(deps.env);
      const config = loadDigestConfig(deps.env, parsed as DigestFlags);
      const proxy = loadProxySetting(deps.env, {
        url: "DIGEST_PROXY_URL",
        noProxy: "DIGEST_NO_PROXY",
      });
      if (ignored.length > 0) {
        (deps.logger ?? createLogger()).info(
          `${ignored.join(", ")} set in the environment: not used (the digest's requests go through DIGEST_PROXY_URL only${proxy ? "" : ", which is not set"})`,
        );
      }
      const fetch = fetchThroughProxy(deps.fetch ?? globalThis.fetch, proxy);
      // A digest has nothing worth finishing after Ctrl-C: the first signal stops everything.
      const signals = stopSignals(deps.signals);
      try {
        const result = await runDigest(config, { ...deps, fetch, signal: signals.stop });
        deps.onResult?.(result);
      } catch (error) {
        if (!(error instanceof DigestInterruptedError)) throw error;
        deps.onInterrupted?.();
      } finally {
        signals.dispose();
      }
    },
  });
}
