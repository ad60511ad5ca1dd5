import { describe, expect, test } from "bun:test";
import {
  createProgress,
  loggerAround,
  storyName,
  timeLeftText,
} from "../../lib/digest/progress.ts";
import { createMemoryLogger } from "../../lib/log.ts";

function stream(isTTY: boolean) {
  const writes: string[] = [];
  return { isTTY, columns: 200, writes, write: (text: string) => void writes.push(text) };
}

/** The line createProgress() first draws, for one story titled `title`, on a terminal that wide. */
function firstLine(columns: number, title: string): string {
  const terminal = { ...stream(true), columns };
  const progress = createProgress(terminal, { total: 1, titles: [title], now: () => 0, tickMs: 0 });
  progress.update(0, "fetching");
  return terminal.writes[0]?.replace("\r\u001b[K", "") ?? "";
}

describe("createProgress()", () => {
  test("shows story n/N, the step, stories done and elapsed time on a terminal", () => {
    const tty = stream(true);
    let now = 1_000;
    const progress = createProgress(tty, {
      total: 10,
      titles: ["First", "Second\u001b[31m"],
      now: () => now,
      tickMs: 0,
    });
    now = 3_500;
    progress.done(0);
    progress.update(1, "summarising the article");
    expect(tty.writes).toEqual([
      "\r\u001b[Kstory 2/10 · summarising the article · 1 done · 2.5s · Second",
    ]);
    progress.clear();
    expect(tty.writes.at(-1)).toBe("\r\u001b[K");
  });

  test("says the time the run expects still to take, once it can tell", () => {
    const tty = stream(true);
    let left: number | null = null;
    const progress = createProgress(tty, {
      total: 10,
      titles: ["", "", "Third"],
      now: () => 0,
      tickMs: 0,
      timeLeft: () => left,
    });
    progress.update(2, "summarising the article");
    left = 12 * 60_000 + 10_000;
    progress.redraw();
    expect(tty.writes).toEqual([
      "\r\u001b[Kstory 3/10 · summarising the article · 0 done · 0.0s · Third",
      "\r\u001b[Kstory 3/10 · about 12 min left · summarising the article · 0 done · 0.0s · Third",
    ]);
  });

  test("timeLeftText() speaks minutes, then tens of seconds at the end", () => {
    expect(timeLeftText(20 * 60_000)).toBe("about 20 min left");
    expect(timeLeftText(95_000)).toBe("about 2 min left");
    expect(timeLeftText(44_000)).toBe("about 40 s left");
    expect(timeLeftText(3_000)).toBe("under 10 s left");
  });

  test("writes nothing when stderr is not a terminal", () => {
    const pipe = stream(false);
    const progress = createProgress(pipe, { total: 2, titles: ["a", "b"], tickMs: 0 });
    progress.update(0, "fetching the article");
    progress.done(0);
    progress.clear();
    expect(pipe.writes).toEqual([]);
  });

  test.each([
    ["cuts the line to the terminal width", 30, 29],
    ["assumes 80 columns when the terminal reports none", 0, 79],
  ])("%s", (_, columns, width) => {
    expect(firstLine(columns, "x".repeat(200))).toHaveLength(width);
  });
});

test("createProgress() counts a wide title's columns, so the line never wraps", () => {
  const line = firstLine(60, "日本語のタイトルがとても長い記事について".repeat(3));
  expect(line.endsWith("…")).toBe(true);
  expect(Bun.stringWidth(line)).toBeLessThanOrEqual(59);
  expect(Bun.stringWidth(line)).toBeGreaterThanOrEqual(58);
});

test("createProgress() redraw() brings the elapsed time up to date", () => {
  const tty = stream(true);
  let now = 0;
  const progress = createProgress(tty, { total: 1, titles: ["t"], now: () => now, tickMs: 0 });
  progress.update(0, "summarising the article");
  now = 42_000;
  progress.redraw();
  expect(tty.writes.at(-1)).toBe(
    "\r\u001b[Kstory 1/1 · summarising the article · 0 done · 42.0s · t",
  );
});

test("createProgress() stop() removes the line and draws no more", () => {
  const tty = stream(true);
  const progress = createProgress(tty, { total: 1, titles: ["t"], now: () => 0, tickMs: 0 });
  progress.update(0, "fetching");
  progress.stop();
  progress.redraw();
  expect(tty.writes).toEqual(["\r\u001b[Kstory 1/1 · fetching · 0 done · 0.0s · t", "\r\u001b[K"]);
});

describe("loggerAround()", () => {
  test("clears the progress line before a log line and draws it again after", () => {
    const tty = stream(true);
    const progress = createProgress(tty, { total: 1, titles: ["t"], now: () => 0, tickMs: 0 });
    progress.update(0, "fetching");
    const memory = createMemoryLogger();
    const logger = loggerAround(memory, progress);
    tty.writes.length = 0;
    logger.warn("careful");
    expect(memory.lines).toEqual(["warn careful"]);
    expect(tty.writes).toEqual([
      "\r\u001b[K",
      "\r\u001b[Kstory 1/1 · fetching · 0 done · 0.0s · t",
    ]);
  });
});

describe("storyName()", () => {
  test("quotes the title on one line, without control characters, cut when long", () => {
    expect(storyName("A tiny database")).toBe("“A tiny database”");
    expect(storyName("Two\nlines\u001b[31m red")).toBe("“Two lines red”");
    expect(storyName("x".repeat(100), 20)).toBe(`“${"x".repeat(19)}…”`);
  });
});
