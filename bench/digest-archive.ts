/**
 * bench:archive — what keeping an archive costs a run as the years go by: the time to write a
 * day (its page and JSON, index.html, feed.xml) into a folder already holding 0, 365 and 3,650
 * days of 30 stories each. The feed reads only the last 7 days' JSON; the index reads index.json
 * (each day's count and headlines), made from every day's JSON by the first run that lacks it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openArchive } from "../lib/digest/render/archive.ts";
import { daysBefore } from "../lib/digest/render/dates.ts";
import { jsonRenderer } from "../lib/digest/render/json.ts";
import { createMemoryLogger } from "../lib/log.ts";
import { PAGE_META, sampleDigests } from "../tests/fakes/digest-page.ts";
import { median } from "./shared.ts";

const STORIES = Array.from({ length: 3 }, (_, round) =>
  sampleDigests().map((digest) => ({
    ...digest,
    story: { ...digest.story, id: Number(digest.story.id) + round * 100 },
  })),
).flat();
const META = { ...PAGE_META, total: STORIES.length };
const TODAY = "2026-11-25";

function dayJson(): string {
  const renderer = jsonRenderer();
  renderer.begin(META);
  for (const [index, digest] of STORIES.entries()) renderer.story(digest, index);
  return renderer.end();
}

async function measure(
  existingDays: number,
): Promise<{ ms: number; firstMs: number; feedBytes: number }> {
  const dir = mkdtempSync(join(tmpdir(), "bench-archive-"));
  try {
    const json = dayJson();
    for (let i = 1; i <= existingDays; i++) {
      const key = daysBefore(TODAY, i);
      writeFileSync(join(dir, `${key}.json`), json);
      writeFileSync(join(dir, `${key}.html`), "<!doctype html>");
    }
    const archive = await openArchive(dir);
    const at = Date.parse(`${TODAY}T07:00:00Z`);
    const runs: number[] = [];
    for (let run = 0; run < 5; run++) {
      const started = performance.now();
      await archive.write(
        { meta: META, stories: STORIES, at },
        { timeZone: "UTC", logger: createMemoryLogger() },
      );
      runs.push(performance.now() - started);
    }
    return {
      ms: median(runs),
      firstMs: runs[0] ?? 0,
      feedBytes: Bun.file(join(dir, "feed.xml")).size,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `bench:archive: one day of ${STORIES.length} stories written, median of 5 runs (the first: index.json made from every day's JSON)`,
);
for (const days of [0, 365, 3650]) {
  const { ms, firstMs, feedBytes } = await measure(days);
  console.log(
    `  ${String(days).padStart(5)} days already archived: ${ms.toFixed(1)} ms (first ${firstMs.toFixed(0)} ms), feed.xml ${(feedBytes / 1024).toFixed(0)} KiB`,
  );
}
