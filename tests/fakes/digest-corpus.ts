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
