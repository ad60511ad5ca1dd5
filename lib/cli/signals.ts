/**
 * Signals arriving this soon after the first count as the same keypress. Ctrl-C under `bun run`
 * is delivered twice: the terminal signals the whole process group, and `bun run` forwards its
 * own copy to the child a moment later. Read as two, one keypress would abort what a graceful
 * stop was meant to let finish.
 */
export const SAME_KEYPRESS_MS = 1000;

export type StopSignalName = "SIGINT" | "SIGTERM" | "SIGHUP";

/** Where signals come from: `process`, or an EventEmitter in tests. */
export interface SignalSource {
  on(event: StopSignalName, listener: () => void): unknown;
  off(event: StopSignalName, listener: () => void): unknown;
}

export interface StopSignalsOptions {
  source?: SignalSource;
  signals?: readonly StopSignalName[];
  /** See SAME_KEYPRESS_MS. */
  windowMs?: number;
  /** Monotonic clock in ms; tests pass a fake one. */
  now?: () => number;
  /** Told of a signal within the window, taken as the same keypress (for a debug line). */
  onRepeat?: (name: StopSignalName) => void;
  /** Runs `fn` after `ms` without keeping the process alive; tests pass a fake. */
  later?: (fn: () => void, ms: number) => void;
}

function unrefTimeout(fn: () => void, ms: number): void {
  setTimeout(fn, ms).unref();
}

export interface StopSignals {
  /** Aborted by the first signal (and those within the window): stop gracefully. */
  stop: AbortSignal;
  /** Aborted by a signal after the window: stop now, abandoning what is in flight. */
  abort: AbortSignal;
  /** Resolves with the first signal's name. */
  stopped: Promise<StopSignalName>;
  /**
   * Removes the listeners; a signal then gets its default action (the process ends). Within the
   * same-keypress window of a stop they stay until it has passed: a command that stopped that
   * fast must not be ended by the keypress's second copy arriving late.
   */
  dispose(): void;
}

/**
 * The one stop-signal helper of every long-running command (worker, app, receiver, demo): the
 * first SIGINT/SIGTERM asks for a graceful stop, a later one aborts, and after that the listeners
 * are gone so a third ends the process the default way.
 */
export function stopSignals(options: StopSignalsOptions = {}): StopSignals {
  const source = options.source ?? process;
  const names = options.signals ?? ["SIGINT", "SIGTERM"];
  const windowMs = options.windowMs ?? SAME_KEYPRESS_MS;
  const now = options.now ?? (() => performance.now());
  const stop = new AbortController();
  const abort = new AbortController();
  const { promise: stopped, resolve } = Promise.withResolvers<StopSignalName>();
  let firstAt = 0;

  const listeners = names.map((name) => {
    const listener = () => {
      const at = now();
      if (!stop.signal.aborted) {
        firstAt = at;
        stop.abort(name);
        resolve(name);
        return;
      }
      if (at - firstAt < windowMs) {
        options.onRepeat?.(name);
        return;
      }
      abort.abort(name);
      dispose();
    };
    return [name, listener] as const;
  });
  let disposed = false;
  function removeListeners(): void {
    for (const [name, listener] of listeners) source.off(name, listener);
  }
  function dispose(): void {
    if (disposed) return;
    disposed = true;
    const left = stop.signal.aborted && !abort.signal.aborted ? windowMs - (now() - firstAt) : 0;
    if (left > 0) (options.later ?? unrefTimeout)(removeListeners, left);
    else removeListeners();
  }
  for (const [name, listener] of listeners) source.on(name, listener);
  return { stop: stop.signal, abort: abort.signal, stopped, dispose };
}
