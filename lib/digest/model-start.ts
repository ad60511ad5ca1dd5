/**
 * How a run meets its model server. The first run of a model at a server's URL checks it before
 * anything else (preflight, then where it runs), and the cache remembers what it found. A re-run
 * of the same model at the same URL starts from that memory and checks the server on its first call instead: a
 * run whose every summary comes from the cache sends the server nothing, not even a load.
 */
import type { Logger } from "../log.ts";
import { errorMessage } from "../text/error-message.ts";
import type { DigestConfig } from "./config.ts";
import { checkModel, contextWindow } from "./run-start.ts";
import type { CheckedModel, SummaryCache } from "./summarise/cache.ts";
import type { MachineInfo, ModelClient, ModelInfo } from "./summarise/models/model-client.ts";
import { cachedModelName } from "./summarise/models/open-model.ts";

export interface ModelStart {
  /** The client the run calls: checked already, or checking itself on its first call. */
  model: ModelClient;
  facts: ModelInfo;
  numCtx: number;
  /** The server was not asked yet: the model is not known to be loaded. */
  deferred: boolean;
  /** Aborted, with the check's error as its reason, when the first call's check failed. */
  failed: AbortSignal;
}

/** The model checked now, or (a re-run of a model checked before) on its first call. */
export async function startModel(
  config: Pick<DigestConfig, "api" | "server" | "numCtx">,
  client: ModelClient,
  run: { cache: SummaryCache | undefined; signal: AbortSignal | undefined; logger: Logger },
): Promise<ModelStart> {
  const named = config.server.model;
  const at = { server: config.server.url, model: cachedModelName(config.api, named ?? "") };
  const checked = named === undefined ? undefined : recall(run, at.server, at.model);
  if (named === undefined || checked === undefined) {
    const { facts, numCtx } = await checkModel(config, client, run.signal, run.logger);
    return { model: client, facts, numCtx, deferred: false, failed: new AbortController().signal };
  }
  const facts = { model: named, contextLength: checked.contextLength };
  const numCtx = contextWindow(config.numCtx, checked.contextLength, named, run.logger);
  const { model, failed } = checkedOnFirstCall(client, checked, (found) =>
    // What the server says now (a model pulled again may have another context length).
    rememberModel(run.cache, at, found, run.logger),
  );
  return { model, facts, numCtx, deferred: true, failed };
}

/** Remembers what this run's check found, for the next run's start; a cache error is a warning. */
export function rememberModel(
  cache: SummaryCache | undefined,
  at: { server: string; model: string },
  found: { facts: ModelInfo; machine: MachineInfo | null },
  logger: Logger,
): void {
  try {
    cache?.rememberModel(at.server, at.model, {
      contextLength: found.facts.contextLength,
      placement: found.machine?.placement ?? null,
    });
  } catch (error) {
    logger.warn(`The model's check could not be remembered: ${errorMessage(error)}`);
  }
}

function recall(
  run: { cache: SummaryCache | undefined; logger: Logger },
  server: string,
  model: string,
): CheckedModel | undefined {
  try {
    return run.cache?.checkedModel(server, model);
  } catch (error) {
    run.logger.warn(`The model's last check could not be read: ${errorMessage(error)}`);
    return undefined;
  }
}

/**
 * The client checking the server (preflight) before its first generate, once for all calls, and
 * telling `onChecked` what it found; `machine` answers from the last check, asking nothing. A failed check aborts `failed`, so the
 * run stops with the check's own message, as it would have before the first story.
 */
function checkedOnFirstCall(
  client: ModelClient,
  checked: CheckedModel,
  onChecked: (found: { facts: ModelInfo; machine: MachineInfo | null }) => void,
): { model: ModelClient; failed: AbortSignal } {
  const failed = new AbortController();
  let check: Promise<unknown> | undefined;
  const machine: MachineInfo | null =
    checked.placement === null ? null : { placement: checked.placement, loadMs: null };
  const model: ModelClient = {
    describe: client.describe,
    preflight: (signal) => client.preflight(signal),
    async generate(request, call) {
      check ??= client.preflight(call.signal).then(
        (facts) => onChecked({ facts, machine }),
        (error: unknown) => {
          failed.abort(error);
          throw error;
        },
      );
      await check;
      return client.generate(request, call);
    },
    machine: async () => machine,
  };
  return { model, failed: failed.signal };
}
