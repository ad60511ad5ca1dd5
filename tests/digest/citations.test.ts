import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { JsonStory } from "../../lib/digest/render/json.ts";
import { articleHtml, articleParagraphs } from "../fakes/article-site.ts";
import { runDigestCommand } from "../fakes/digest-run.ts";
import { startDigestWorld } from "../fakes/digest-world.ts";
import { commentHit, storyHit } from "../fakes/hn-search.ts";
import { lobstersComment, lobstersStory, startFakeLobsters } from "../fakes/lobsters.ts";
import { echoTitle, type GenerateBody, promptKind } from "../fakes/ollama.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

setDefaultTimeout(30_000);

const tempDir = tempDirs("digest-citations-");

const BODY = articleParagraphs();

/** The id the prompt gives the comment that opens with `text`: `[c3 bob] text…`. */
function idOf(prompt: string, text: string): string {
  const id = new RegExp(`\\[(c\\d+) [^\\]]*\\] ${text}`).exec(prompt)?.[1];
  if (!id) throw new Error(`no comment ${text} in the prompt`);
  return id;
}

/** A model that cites: one true quotation, one it made up. */
function citingModel(body: GenerateBody): string {
  if (promptKind(body.prompt) === "article") return echoTitle(body);
  const first = idOf(body.prompt, "Per-thread");
  const reply = idOf(body.prompt, "Not on NUMA");
  return [
    `- Most agree caches make it faster: "per-thread caches are why it's faster" [${first}].`,
    `- One calls it "the best allocator ever written" [${reply}].`,
    `- It depends on the machine [${reply}, c99].`,
  ].join("\n");
}

function hnWorld() {
  const story = storyHit({
    title: "A faster allocator",
    url: "/malloc",
    points: 300,
    num_comments: 2,
  });
  const id = Number(story.objectID);
  const top = commentHit(id, {
    objectID: "7001",
    comment_text: "Per-thread caches are why it&#x27;s faster; the rest is noise.",
  });
  const reply = commentHit(id, {
    objectID: "7002",
    parent_id: 7001,
    comment_text: "Not on NUMA machines, where the caches fight.",
  });
  return startDigestWorld({
    stories: [story],
    comments: { [id]: [top, reply] },
    pages: { "/malloc": { body: articleHtml("A faster allocator", BODY) } },
    ollama: { generate: citingModel },
  });
}

describe("summaries that cite", () => {
  test("link each point to the comments it draws on; an invented quotation is marked, never quoted", async () => {
    using world = hnWorld();
    const env = { ...world.env, XDG_CACHE_HOME: tempDir() };
    const run = await runDigestCommand(env, ["--format", "json"]);
    expect(run.error).toBeUndefined();
    const [story] = (JSON.parse(run.stdout) as { stories: JsonStory[] }).stories;
    expect(story?.discussionSummary).toBe(
      [
        `- Most agree caches make it faster: "per-thread caches are why it's faster" [1].`,
        "- One calls it the best allocator ever written (unverified) [2].",
        "- It depends on the machine [2].",
      ].join("\n"),
    );
    expect(story?.discussionCitations).toEqual([
      "https://news.ycombinator.com/item?id=7001",
      "https://news.ycombinator.com/item?id=7002",
    ]);
    expect(story?.notes).toContain(
      "A quotation in the discussion summary could not be found word for word in the comments it cites; it is shown without quotation marks, marked (unverified).",
    );
    // The prompt asked for the ids.
    const prompt = world.ollama.generateCalls.find(
      (call) => promptKind(call.prompt) === "discussion",
    );
    expect(prompt?.prompt).toContain("End each point with the ids of the comments it draws on");

    // An hour later, all from the cache: no model call, the same citations, in HTML too.
    const calls = world.ollama.generateCalls.length;
    const again = await runDigestCommand(env, ["--format", "html"]);
    expect(again.error).toBeUndefined();
    expect(world.ollama.generateCalls.length).toBe(calls);
    expect(again.stdout).toContain(
      '<sup class="cite"><a href="https://news.ycombinator.com/item?id=7001">[1]</a></sup>',
    );
    expect(again.stdout).toContain("the best allocator ever written (unverified)");
    expect(again.stdout).toContain("&quot;per-thread caches are why it's faster&quot;");
    expect(again.stdout).not.toContain("&quot;the best allocator");
  });

  test("cite Lobsters comments by their permalinks", async () => {
    using world = startDigestWorld({
      stories: [],
      pages: { "/l": { body: articleHtml("Lobsters story", BODY) } },
      ollama: { generate: citingModel },
    });
    using lobsters = startFakeLobsters({
      stories: (base) => [
        lobstersStory(base, { short_id: "cite01", url: `${world.site.url}/l`, comment_count: 2 }),
      ],
      comments: (base) => ({
        cite01: [
          lobstersComment(base, {
            short_id: "top001",
            comment: "<p>Per-thread caches are why it's faster.</p>",
          }),
          lobstersComment(base, {
            short_id: "rep001",
            parent: "top001",
            comment: "<p>Not on NUMA machines.</p>",
          }),
        ],
      }),
    });
    const env = { ...world.env, LOBSTERS_URL: lobsters.url, XDG_CACHE_HOME: tempDir() };
    const run = await runDigestCommand(env, ["--source", "lobsters"]);
    expect(run.error).toBeUndefined();
    expect(run.stdout).toContain(`caches are why it's faster" [[1]](${lobsters.url}/c/top001)`);
    expect(run.stdout).toContain(`It depends on the machine [[2]](${lobsters.url}/c/rep001)`);
  });
});
