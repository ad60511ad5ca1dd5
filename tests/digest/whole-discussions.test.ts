/**
 * Whole discussions, end to end: today's front page with a 400-comment thread on top, digested
 * against a fake Ollama reporting a CPU's and a GPU's rates (modelled time, nothing waits). The
 * thread's three largest subthreads reach the model, and no reply reaches it without the comment
 * it answers, whatever the budget and however many comments were fetched.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { shapedThread } from "../fakes/digest-corpus.ts";
import { promptSent, runDigestOnModelClock } from "../fakes/digest-run.ts";
import { startDigestWorld } from "../fakes/digest-world.ts";
import { frontPageToday } from "../fakes/front-page-today.ts";
import { promptKind } from "../fakes/ollama.ts";

// Ten stories with hundreds of comments each, over real sockets, on a busy machine.
setDefaultTimeout(60_000);

const CPU = { prefillPerSecond: 24, decodePerSecond: 11, answerTokens: 150 };
const GPU = { prefillPerSecond: 20_000, decodePerSecond: 200, answerTokens: 150 };
const SHAPE = { total: 400, topLevel: 80, largest: [140, 52, 12] } as const;

/** Today's front page, its top story's discussion replaced by a 400-comment thread. */
function frontPageWithBigThread() {
  const today = frontPageToday();
  const top = today.stories[0];
  if (!top) throw new Error("no story");
  const id = Number(top.objectID);
  const thread = shapedThread(id, SHAPE, 41);
  today.comments[id] = thread.hits;
  today.stories[0] = { ...top, num_comments: SHAPE.total };
  // Each comment's marker, and the marker of the comment it answers (null: the story).
  const parentOf = new Map<string, string | null>();
  const markerOf = new Map<number, string>();
  for (const hit of thread.hits) {
    markerOf.set(Number(hit.objectID), String(hit.comment_text).slice(0, 6));
  }
  for (const hit of thread.hits) {
    const parent = markerOf.get(Number(hit.parent_id)) ?? null;
    parentOf.set(String(hit.comment_text).slice(0, 6), parent);
  }
  return { today, largest: thread.largest, parentOf };
}

async function topDiscussionPrompt(
  machine: typeof CPU,
  placement: "cpu" | "gpu",
  flags: Record<string, string> = {},
) {
  const { today, largest, parentOf } = frontPageWithBigThread();
  using world = startDigestWorld({ ...today, ollama: { placement, machine } });
  await runDigestOnModelClock(world, flags);
  const prompt = promptSent(
    world,
    (text) => /^Story: Front-page story 1$/m.test(text) && promptKind(text) === "discussion",
  );
  return { prompt, largest, parentOf };
}

/** Comments of each of the largest subthreads that start a line of the prompt. */
function largestShown(prompt: string, largest: readonly string[][]): number[] {
  return largest.map(
    (markers) =>
      markers.filter((m) => new RegExp(`^ *\\S[^\\n]*?\\b${m} `, "m").test(prompt)).length,
  );
}

/**
 * The comments shown whose parent is not the comment the tree places them under (a reply
 * shown at the top, or under another comment): none, when no reply is shown without its parent.
 */
function orphans(prompt: string, parentOf: ReadonlyMap<string, string | null>): string[] {
  const stack: string[] = [];
  const found: string[] = [];
  for (const line of prompt.split("\n")) {
    const match = /^( *)(?:\[[^\]]*\]|[^\s:[]+:) (cmt\d{3}) /.exec(line);
    if (!match) continue;
    const depth = (match[1]?.length ?? 0) / 2;
    const marker = match[2] ?? "";
    const expected = depth === 0 ? null : (stack[depth - 1] ?? "?");
    if (parentOf.get(marker) !== expected) found.push(marker);
    stack.length = depth;
    stack[depth] = marker;
  }
  return found;
}

describe("a 400-comment thread's three largest subthreads reach the model, no reply alone", () => {
  test("at a GPU's rates: min(10, half its size) of each", async () => {
    const { prompt, largest, parentOf } = await topDiscussionPrompt(GPU, "gpu");
    const [big, middle, small] = largestShown(prompt, largest);
    expect(big).toBeGreaterThanOrEqual(10);
    expect(middle).toBeGreaterThanOrEqual(10);
    expect(small).toBeGreaterThanOrEqual(6);
    expect(orphans(prompt, parentOf)).toEqual([]);
  });

  test("at a CPU's rates, within 20 and within 5 minutes: three or more of each", async () => {
    for (const budget of ["20m", "5m"]) {
      const { prompt, largest, parentOf } = await topDiscussionPrompt(CPU, "cpu", {
        "time-budget": budget,
      });
      for (const count of largestShown(prompt, largest)) expect(count).toBeGreaterThanOrEqual(3);
      expect(orphans(prompt, parentOf)).toEqual([]);
    }
  });

  test("with only 200 comments fetched, a reply whose parent was not fetched is left out", async () => {
    const { prompt, parentOf } = await topDiscussionPrompt(GPU, "gpu", { "max-comments": "200" });
    expect(prompt.match(/\bcmt\d{3} /g)?.length ?? 0).toBeGreaterThan(50);
    expect(orphans(prompt, parentOf)).toEqual([]);
  });
});
