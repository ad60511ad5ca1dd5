import { type ModelError, modelGone } from "./models/model-client.ts";

/** Failures in a row that mean the model cannot answer, after which the run makes no more calls. */
export const GONE_AFTER = 3;

export interface ModelHealth {
  /** Aborted once the model is taken for gone: every call and download still to come stops. */
  readonly signal: AbortSignal;
  /** The failure that stopped the run, with how many came in a row; null while the model answers. */
  readonly gone: ModelError | null;
  /** An answer came: the failures before were one-offs, and their held warnings are shown. */
  answered(): void;
  /**
   * A call failed. A failure meaning the model is gone holds its warning back (a third in a row
   * makes it moot); any other is warned at once.
   */
  failed(error: unknown, warn: () => void): void;
  /** Shows the warnings still held (the run ended before a verdict). */
  flush(): void;
}

/**
 * Watches the model's answers for the run: after GONE_AFTER consecutive failures that mean it
 * cannot answer (connection refused, model not found, 5xx), it aborts `signal`, so the digest
 * stops with one line instead of a warning per story still queued.
 */
export function createModelHealth(): ModelHealth {
  const controller = new AbortController();
  let inARow = 0;
  let held: (() => void)[] = [];
  let gone: ModelError | null = null;
  const flush = () => {
    const shown = held;
    held = [];
    for (const warn of shown) warn();
  };
  return {
    signal: controller.signal,
    get gone() {
      return gone;
    },
    answered() {
      inARow = 0;
      flush();
    },
    failed(error, warn) {
      if (gone) return;
      if (!modelGone(error)) {
        warn();
        return;
      }
      inARow++;
      held.push(warn);
      if (inARow >= GONE_AFTER) {
        gone = error;
        held = [];
        controller.abort(error);
      }
    },
    flush,
  };
}

/**
 * The one line a run stopped by a gone model ends with: what happened, the fix, and that --out
 * was left alone.
 */
export function goneMessage(
  gone: ModelError,
  run: { describe: string; out: string | undefined },
): string {
  const fix = gone.hint ? ` ${gone.hint}` : "";
  const out = run.out === undefined ? "" : ` ${run.out} was left as it was.`;
  return `Stopped after ${GONE_AFTER} failed calls in a row: ${run.describe} cannot answer (${gone.reason}).${fix}${out}`;
}
