import { withoutUrlCredentials } from "../../../text/url-credentials.ts";
import { type Api, MODEL_APIS, type ModelServer } from "./apis.ts";
import {
  type ModelClient,
  ModelError,
  normaliseModelName,
  PreflightError,
} from "./model-client.ts";

export interface OpenModelOptions {
  fetch?: typeof fetch;
  /** Clock for each call's wall time. */
  now?: () => number;
}

/**
 * The one place that opens the model API the digest talks to, as lib/store/open.ts opens a
 * store: the row of MODEL_APIS that --api names.
 */
export function openModelClient(
  config: { api: Api; server: ModelServer },
  options: OpenModelOptions = {},
): ModelClient {
  const checkTimeoutMs = Math.min(10_000, config.server.timeoutMs ?? 10_000);
  return withoutCredentialsShown(
    MODEL_APIS[config.api].open(config.server, { ...options, checkTimeoutMs }),
  );
}

/**
 * The client with the server's `user:password@` (a proxy's basic auth in OLLAMA_ENDPOINT_URL)
 * taken out of everything a person reads: its name, and each failure's message, reason and fix.
 * The requests still carry them.
 */
export function withoutCredentialsShown(client: ModelClient): ModelClient {
  const shown = <T>(call: () => Promise<T>) =>
    call().catch((error: unknown) => {
      throw redacted(error);
    });
  return {
    describe: withoutUrlCredentials(client.describe),
    preflight: (signal) => shown(() => client.preflight(signal)),
    generate: (request, call) => shown(() => client.generate(request, call)),
    ...(client.machine
      ? { machine: (options) => shown(() => client.machine?.(options) ?? Promise.resolve(null)) }
      : {}),
  };
}

function redacted(error: unknown): unknown {
  const clean = withoutUrlCredentials;
  if (error instanceof ModelError) {
    const hint = error.hint === undefined ? undefined : clean(error.hint);
    return new ModelError(clean(error.message), error.kind, hint, clean(error.reason));
  }
  if (error instanceof PreflightError) return new PreflightError(clean(error.message));
  if (error instanceof Error) error.message = clean(error.message);
  return error;
}

/**
 * The name summaries are cached under: the model prefixed with its API's cachePrefix. Ollama's
 * is empty (the caches of earlier versions stay valid); another's ends in a space, which no
 * model name has, so a summary Ollama wrote is never served as a llama-server one. A language
 * other than English follows the (tagged) name after a space: a German summary is never served
 * to an English digest, nor the other way round, and English keeps the earlier caches.
 */
export function cachedModelName(api: Api, model: string, language = "en"): string {
  const name = `${MODEL_APIS[api].cachePrefix}${model}`;
  return language === "en" ? name : `${normaliseModelName(name)} lang=${language}`;
}
