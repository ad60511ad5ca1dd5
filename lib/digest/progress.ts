import type { Logger } from "../log.ts";
import { stripControl } from "../text/control.ts";

export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export interface Progress {
  /** Story `index` (0-based) is now doing `action`. */
  update(index: number, action: string): void;
  /** Story `index` is finished. */
  done(index: number): void;
  /** Removes the line (before a log line, and at the end). */
  clear(): void;
  /** Draws the line again after a log line. */
  redraw(): void;
}

const NO_PROGRESS: Progress = { update() {}, done() {}, clear() {}, redraw() {} };

/**
 * One status line on stderr, rewritten in place: story n/N, what it is doing, elapsed time.
 * Only when the stream is a terminal; in a pipe or a file it writes nothing.
 */
export function createProgress(
  stream: ProgressStream,
  options: { total: number; titles: readonly string[]; now?: () => number },
): Progress {
  if (!stream.isTTY) return NO_PROGRESS;
  const now = options.now ?? Date.now;
  const started = now();
  let finished = 0;
  let line = "";
  const draw = () => {
    const width = Math.max(20, (stream.columns ?? 80) - 1);
    stream.write(`\r\x1b[K${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
  };
  return {
    update(index, action) {
      const title = stripControl(options.titles[index] ?? "").replace(/\s+/g, " ");
      const elapsed = ((now() - started) / 1000).toFixed(1);
      line = `story ${index + 1}/${options.total} · ${action} · ${finished} done · ${elapsed}s · ${title}`;
      draw();
    },
    done() {
      finished++;
    },
    clear() {
      if (line !== "") stream.write("\r\x1b[K");
    },
    redraw() {
      if (line !== "") draw();
    },
  };
}

/** A logger whose lines do not run into the progress line. */
export function loggerAround(logger: Logger, progress: Progress): Logger {
  const wrap =
    (method: keyof Logger) =>
    (...args: unknown[]) => {
      progress.clear();
      (logger[method] as (...a: unknown[]) => void)(...args);
      progress.redraw();
    };
  return {
    debug: wrap("debug"),
    info: wrap("info"),
    warn: wrap("warn"),
    error: wrap("error"),
    success: wrap("success"),
    start: wrap("start"),
  } as Logger;
}
