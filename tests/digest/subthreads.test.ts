/**
 * The discussions that matter, end to end: a default digest of today's front page against a fake
 * Ollama reporting a CPU's and a GPU's rates (modelled time, nothing waits), and what of the
 * busiest thread's three largest subthreads (132, 47 and 11 of its 366 comments) the model saw.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { promptSent, runDigestOnModelClock } from "../fakes/digest-run.ts";
import { startDigestWorld } from "../fakes/digest-world.ts";
import { frontPageToday } from "../fakes/front-page-today.ts";

// Ten stories with hundreds of comments each, over real sockets, on a busy machine.
setDefaultTimeout(60_000);

async function largestSeen(machine: { prefillPerSecond: number; decodePerSecond: number }) {
  const today = frontPageToday();
  const placement = machine.prefillPerSecond > 1000 ? "gpu" : "cpu";
  using world = startDigestWorld({ ...today, ollama: { placement, machine } });
  await runDigestOnModelClock(world);
  const prompt = promptSent(
    world,
    (text) => /^Story: Front-page story 1$/m.test(text) && text.includes("Comments:"),
  );
  return today.largest.map((markers) => markers.filter((m) => prompt.includes(`] ${m} `)).length);
}

describe("the busiest thread's largest subthreads reach the model", () => {
  test("at a GPU's rates: min(10, half its size) comments of each, or more", async () => {
    const [big, middle, small] = await largestSeen({
      prefillPerSecond: 20_000,
      decodePerSecond: 200,
    });
    expect(big).toBeGreaterThanOrEqual(10);
    expect(middle).toBeGreaterThanOrEqual(10);
    expect(small).toBeGreaterThanOrEqual(5);
  });

  test("within a CPU's 20-minute budget: three comments of each, or more", async () => {
    const seen = await largestSeen({ prefillPerSecond: 24, decodePerSecond: 11 });
    for (const count of seen) expect(count).toBeGreaterThanOrEqual(3);
  });
});
