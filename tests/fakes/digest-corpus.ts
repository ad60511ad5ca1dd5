/**
 * Larger, realistic inputs for the digest, generated deterministically: a busy comment thread
 * as the search API returns it (flat, relevance order) and a long article full of links. Every
 * comment and paragraph starts with a marker (`cmt017`, `par017`) so a test or the benchmark
 * can tell which of them reached the model's prompt.
 */
import { articleHtml } from "./article-site.ts";
import { commentHit, type Hit } from "./hn-search.ts";

/** mulberry32: a small seeded generator, so every run builds the same corpus. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "the a database latency memory we it this that compiler users rust python kernel cache " +
  "performance because however actually benchmark server tests years team code production " +
  "query index disk network problem thread lock design api cost cloud license open source"
).split(" ");

function sentence(random: () => number, words: number): string {
  const picked = Array.from({ length: words }, () => WORDS[Math.floor(random() * WORDS.length)]);
  const text = picked.join(" ");
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** Prose of about `chars` characters. */
function prose(random: () => number, chars: number): string {
  const parts: string[] = [];
  let length = 0;
  while (length < chars) {
    const next = sentence(random, 6 + Math.floor(random() * 14));
    parts.push(next);
    length += next.length + 1;
  }
  return parts.join(" ");
}

export interface ThreadCorpus {
  /** Comment hits in the order the search API would send them. */
  hits: Hit[];
  /** Marker of each comment (`cmt000` …), top-level ones first. */
  markers: string[];
  topLevelMarkers: string[];
}

/**
 * A thread of `total` comments, `topLevel` of them answering the story, the rest replies up to
 * a few levels deep. Lengths vary as on HN (a few words to a few paragraphs; about 400
 * characters on average); some carry a link or an entity.
 */
export function busyThread(
  storyId: number,
  options: { total?: number; topLevel?: number; seed?: number } = {},
): ThreadCorpus {
  const total = options.total ?? 300;
  const topLevel = Math.min(options.topLevel ?? 60, total);
  const random = seededRandom(options.seed ?? 11);
  const hits: Hit[] = [];
  const markers: string[] = [];
  const ids: number[] = [];
  for (let i = 0; i < total; i++) {
    const marker = `cmt${String(i).padStart(3, "0")}`;
    // Skewed lengths: most comments short, a few long.
    const chars = Math.round(40 + 900 * random() ** 2.2 + (random() < 0.08 ? 1500 : 0));
    let body = `${marker} ${prose(random, chars)}`;
    if (random() < 0.15) {
      const url = `https://example.org/${prose(random, 30).replace(/\W+/g, "-").toLowerCase()}`;
      body += ` See <a href="${url}" rel="nofollow">${url.slice(0, 40)}...</a>`;
    }
    if (random() < 0.3) body = body.replace(". ", ".<p>").replace("it", "it&#x27;s");
    const parentIndex = i < topLevel ? -1 : Math.floor(random() * i);
    const parent = parentIndex === -1 ? storyId : (ids[parentIndex] ?? storyId);
    const hit = commentHit(storyId, {
      comment_text: body,
      parent_id: parent,
      created_at_i: 1754247600 + i * 37,
    });
    hits.push(hit);
    ids.push(Number(hit.objectID));
    markers.push(marker);
  }
  // Relevance order is neither tree nor time order: shuffle deterministically.
  const order = hits.map((hit, i) => ({ hit, key: random(), i }));
  order.sort((a, b) => a.key - b.key);
  return {
    hits: order.map((entry) => entry.hit),
    markers,
    topLevelMarkers: markers.slice(0, topLevel),
  };
}

export interface ArticleCorpus {
  html: string;
  /** Each paragraph's marker and its visible text (anchor texts, no URLs). */
  paragraphs: { marker: string; text: string }[];
}

/**
 * A long article whose paragraphs each hold several links with long URLs, as documentation and
 * news pages do: the visible text is what a reader reads, the URLs are noise for a summary.
 */
export function linkHeavyArticle(
  options: { paragraphs?: number; linksPerParagraph?: number; seed?: number } = {},
): ArticleCorpus {
  const count = options.paragraphs ?? 80;
  const links = options.linksPerParagraph ?? 3;
  const random = seededRandom(options.seed ?? 7);
  const paragraphs: { marker: string; text: string }[] = [];
  const htmlParagraphs: string[] = [];
  for (let i = 0; i < count; i++) {
    const marker = `par${String(i).padStart(3, "0")}`;
    let html = `${marker} ${prose(random, 160)}`;
    let text = html;
    for (let j = 0; j < links; j++) {
      const anchor = prose(random, 12).replace(/\.$/, "");
      const slug = prose(random, 40).replace(/\W+/g, "-").toLowerCase();
      const url = `https://docs.example.com/reference/${slug}?utm_source=news&utm_medium=${j}`;
      const tail = ` ${prose(random, 60)}`;
      html += ` <a href="${url}">${anchor}</a>${tail}`;
      text += ` ${anchor}${tail}`;
    }
    htmlParagraphs.push(html);
    paragraphs.push({ marker, text });
  }
  return { html: articleHtml("A long page with many links", htmlParagraphs), paragraphs };
}

export interface ShapedThread extends ThreadCorpus {
  /** Markers of the largest subthreads' comments (root first), largest subthread first. */
  largest: string[][];
}

/** The sizes of today's busiest front-page thread: 366 comments, largest subthreads 132, 47, 11. */
export const BUSY_SHAPE = { total: 366, topLevel: 70, largest: [132, 47, 11] } as const;

/**
 * A thread of the shape a busy front-page story has: `topLevel` subthreads, the `largest` of
 * the given sizes (counting their top-level comment), the rest of at most 10 comments. The
 * largest come 1st, 4th and 9th in relevance order, as lively subthreads rank high. Replies
 * answer an earlier comment of their subthread; some comments hold a code block.
 */
export function shapedThread(
  storyId: number,
  shape: { total: number; topLevel: number; largest: readonly number[] } = BUSY_SHAPE,
  seed = 23,
): ShapedThread {
  const random = seededRandom(seed);
  const others = shape.topLevel - shape.largest.length;
  const rest = shape.total - shape.largest.reduce((sum, n) => sum + n, 0);
  const sizes = Array.from({ length: others }, () => 1);
  for (let extra = rest - others; extra > 0; ) {
    const i = Math.floor(random() * others);
    if ((sizes[i] ?? 0) < 10) {
      sizes[i] = (sizes[i] ?? 0) + 1;
      extra--;
    }
  }
  const order = [...sizes];
  for (const [rank, size] of shape.largest.entries()) order.splice([0, 3, 8][rank] ?? 0, 0, size);
  const hits: Hit[] = [];
  const replies: Hit[] = [];
  const markers: string[] = [];
  const topLevelMarkers: string[] = [];
  const largest: string[][] = shape.largest.map(() => []);
  let at = 1754247600;
  let n = 0;
  const add = (parent: number, target: Hit[]) => {
    const marker = `cmt${String(n++).padStart(3, "0")}`;
    at += 30 + Math.floor(random() * 60);
    const hit = commentHit(storyId, {
      comment_text: commentBody(random, marker),
      parent_id: parent,
      created_at_i: at,
    });
    target.push(hit);
    markers.push(marker);
    return { marker, id: Number(hit.objectID) };
  };
  for (const size of order) {
    const root = add(storyId, hits);
    topLevelMarkers.push(root.marker);
    const members = [root];
    for (let i = 1; i < size; i++) {
      const parent = members[Math.floor(random() * members.length)] ?? root;
      members.push(add(parent.id, replies));
    }
    const rank = shape.largest.indexOf(size);
    if (rank !== -1 && largest[rank]?.length === 0) largest[rank] = members.map((m) => m.marker);
  }
  // Relevance order mixes replies among the top-level comments, which keep their own order: a
  // fetch capped by --max-comments keeps part of every subthread.
  const keyed = [
    ...hits.map((hit, i) => ({ hit, key: (i + 0.5) / hits.length })),
    ...replies.map((hit) => ({ hit, key: random() })),
  ];
  keyed.sort((a, b) => a.key - b.key);
  return { hits: keyed.map((entry) => entry.hit), markers, topLevelMarkers, largest };
}

/** A comment of realistic length; one in fifteen quotes a few lines of code. */
function commentBody(random: () => number, marker: string): string {
  const chars = Math.round(40 + 900 * random() ** 2.2 + (random() < 0.08 ? 1500 : 0));
  let body = `${marker} ${prose(random, chars)}`;
  if (random() < 0.07) {
    const code = Array.from({ length: 8 }, (_, i) => `  let x${i} = compute(${i}); // ${i}`);
    body = `${marker} ${prose(random, 80)}<p><pre><code>${code.join("\n")}</code></pre>${body.slice(marker.length)}`;
  }
  return body;
}

/**
 * The same thread later: `fraction` more comments, each answering a random earlier one (or the
 * story, one in five), posted after the latest.
 */
export function grownThread(thread: { hits: readonly Hit[] }, fraction: number, seed = 31): Hit[] {
  const random = seededRandom(seed);
  const storyId = Number(thread.hits[0]?.story_id);
  const parents = thread.hits.map((hit) => Number(hit.objectID));
  const lastAt = Math.max(...thread.hits.map((hit) => Number(hit.created_at_i ?? 0)));
  const added = Math.round(thread.hits.length * fraction);
  const more: Hit[] = [];
  for (let i = 0; i < added; i++) {
    const parent =
      random() < 0.2 ? storyId : (parents[Math.floor(random() * parents.length)] ?? storyId);
    const marker = `new${String(i).padStart(3, "0")}`;
    more.push(
      commentHit(storyId, {
        comment_text: commentBody(random, marker),
        parent_id: parent,
        created_at_i: lastAt + 60 * (i + 1),
      }),
    );
  }
  return [...thread.hits, ...more];
}
