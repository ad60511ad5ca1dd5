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
  /** Draws the line again after a log line (with the elapsed time brought up to date). */
  redraw(): void;
  /** Removes the line for good and stops the clock. */
  stop(): void;
}

const NO_PROGRESS: Progress = { update() {}, done() {}, clear() {}, redraw() {}, stop() {} };

/**
 * One status line on stderr, rewritten in place: story n/N, what it is doing, elapsed time.
 * Only when the stream is a terminal; in a pipe or a file it writes nothing.
 */
export function createProgress(
  stream: ProgressStream,
  options: {
    total: number;
    titles: readonly string[];
    now?: () => number;
    /** Redraw this often so the elapsed time moves during a long model call; 0 = never. */
    tickMs?: number;
    /** Model time the run expects still to take (ms), or null while it cannot tell. */
    timeLeft?: () => number | null;
  },
): Progress {
  if (!stream.isTTY) return NO_PROGRESS;
  const now = options.now ?? Date.now;
  const started = now();
  let finished = 0;
  let current: { index: number; action: string } | undefined;
  const line = () => {
    if (!current) return "";
    const title = stripControl(options.titles[current.index] ?? "").replace(/\s+/g, " ");
    const elapsed = ((now() - started) / 1000).toFixed(1);
    const left = options.timeLeft?.() ?? null;
    const estimate = left === null ? "" : ` · ${timeLeftText(left)}`;
    return `story ${current.index + 1}/${options.total}${estimate} · ${current.action} · ${finished} done · ${elapsed}s · ${title}`;
  };
  const draw = () => {
    const text = line();
    if (text === "") return;
    // A pseudo-terminal may report 0 columns: assume the usual 80 then.
    const columns = stream.columns && stream.columns > 0 ? stream.columns : 80;
    const width = Math.max(20, columns - 1);
    stream.write(`\r\x1b[K${fitColumns(text, width)}`);
  };
  const tickMs = options.tickMs ?? 1000;
  const timer = tickMs > 0 ? setInterval(draw, tickMs) : undefined;
  // The clock must never keep the process alive on its own.
  timer?.unref();
  const clear = () => {
    if (current) stream.write("\r\x1b[K");
  };
  return {
    update(index, action) {
      current = { index, action };
      draw();
    },
    done() {
      finished++;
    },
    clear,
    redraw: draw,
    stop() {
      clearInterval(timer);
      clear();
      current = undefined;
    },
  };
}

/**
 * A story as log lines name it: its title, quoted, on one line and cut to `max` characters,
 * so "“A tiny SQLite-compatible database in Rust”: no article: …" says which story at a glance.
 */
export function storyName(title: string, max = 60): string {
  const clean = stripControl(title).replace(/\s+/g, " ").trim();
  return `“${clean.length > max ? `${clean.slice(0, max - 1).trimEnd()}…` : clean}”`;
}

/** "about 12 min left", "about 40 s left", "under 10 s left". */
export function timeLeftText(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 10) return "under 10 s left";
  if (seconds < 90) return `about ${Math.round(seconds / 10) * 10} s left`;
  return `about ${Math.round(seconds / 60)} min left`;
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

/**
 * The text cut to `width` terminal columns, ending in "…" when cut. Columns, not characters: a
 * title in CJK or with emoji takes two a character, and a line longer than the terminal wraps,
 * so the next redraw (which clears one row) would leave the wrapped part behind.
 */
export function fitColumns(text: string, width: number): string {
  if (Bun.stringWidth(text) <= width) return text;
  let out = "";
  let used = 0;
  for (const character of text) {
    const columns = Bun.stringWidth(character);
    if (used + columns > width - 1) break;
    out += character;
    used += columns;
  }
  return `${out}…`;
}
