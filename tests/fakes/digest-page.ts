/**
 * A realistic day's digest for looking at the page: ten stories of the kinds the front page has
 * (articles, Show HN, Ask HN, a job), some new since the last run, summaries as models write them
 * (paragraphs, lists, a code block, a long unbroken URL), notes and missing summaries.
 */
import type { DigestMeta, StoryDigest, StoryType } from "../../lib/digest/types.ts";

export const PAGE_META: DigestMeta = {
  generatedAt: "2026-11-25T14:53:53.147Z",
  model: "llama3.2",
  total: 10,
  newCount: 4,
  lastRunAt: "2026-11-24T07:00:00.000Z",
};

const DISCUSSION =
  "Most commenters agree with the author's numbers but doubt they hold outside the benchmark. " +
  "Several people who run it in production describe **memory growth under load** and workarounds.\n\n" +
  "- One thread compares it with the incumbent and finds it faster for small writes only.\n" +
  "- Another asks about licensing; the author answers that it stays MIT.\n" +
  "- A long side thread argues about whether the comparison was fair.";

const ARTICLE =
  "The author describes how the team rewrote the storage engine in about 5,000 lines, why they " +
  "chose a log-structured design, and what the first year in production taught them. The post " +
  "ends with a list of open problems and an invitation to contribute.";

interface Sample {
  title: string;
  type: StoryType;
  site: string | null;
  words: number | null;
  isNew: boolean;
  points: number;
  comments: number;
  article?: string | null;
  discussion?: string | null;
  notes?: string[];
}

const SAMPLES: Sample[] = [
  {
    title: "A tiny SQLite-compatible database in Rust",
    type: "show",
    site: "github.com",
    words: 1800,
    isNew: false,
    points: 812,
    comments: 301,
  },
  {
    title: "The unreasonable effectiveness of plain text files for personal knowledge management",
    type: "article",
    site: "example.org",
    words: 4200,
    isNew: true,
    points: 540,
    comments: 212,
  },
  {
    title: "Ask HN: What are you working on this November?",
    type: "ask",
    site: null,
    words: 60,
    isNew: false,
    points: 402,
    comments: 990,
    article:
      "The poster asks readers what they are building this month, and invites side projects as well as work.",
  },
  {
    title: "Why our CDN bill went to zero (and then back up)",
    type: "article",
    site: "blog.example.com",
    words: 2300,
    isNew: true,
    points: 388,
    comments: 144,
  },
  {
    title: "Kernel 7.2 released with a new scheduler",
    type: "article",
    site: "lwn.net",
    words: 950,
    isNew: false,
    points: 351,
    comments: 120,
    discussion:
      "Commenters explain the scheduler change:\n\n```\necho sched_ext > /sys/kernel/sched/policy\n```\n\nand see https://example.com/a/very/long/path/that/never/breaks/anywhere/at/all/in/the/url/so/it/must/wrap/somewhere/else for details.",
  },
  {
    title: "Show HN: I built a keyboard-only browser for the terminal",
    type: "show",
    site: "github.com",
    words: 700,
    isNew: true,
    points: 290,
    comments: 88,
  },
  {
    title: "Paywalled: The economics of undersea cables",
    type: "article",
    site: "news.example.net",
    words: null,
    isNew: false,
    points: 255,
    comments: 97,
    article: null,
    notes: ["No article summary: the page is a paywall's teaser."],
  },
  {
    title: "Acme (YC S24) is hiring a founding engineer",
    type: "job",
    site: "acme.example",
    words: 400,
    isNew: true,
    points: 1,
    comments: 0,
    discussion: null,
    notes: ["No discussion summary: there are no comments yet."],
  },
  {
    title: "Floating point numbers, visually explained",
    type: "article",
    site: "example.io",
    words: 3100,
    isNew: false,
    points: 201,
    comments: 64,
  },
  {
    title: "Postmortem of last week's outage",
    type: "article",
    site: "status.example.com",
    words: 1500,
    isNew: false,
    points: 180,
    comments: 75,
    discussion: null,
    notes: [
      "Discussion summary failed: Ollama answered HTTP 500: llama runner process has terminated.",
    ],
  },
];

/** The ten stories, in front-page order. */
export function sampleDigests(): StoryDigest[] {
  return SAMPLES.map((sample, index) => {
    const id = 46_000_001 + index;
    return {
      story: {
        id,
        title: sample.title,
        url: sample.site ? `https://${sample.site}/post/${id}` : null,
        storyText: sample.site ? null : "Tell us!",
        author: `user${index}`,
        points: sample.points,
        numComments: sample.comments,
        type: sample.type,
        site: sample.site,
        createdAt: Date.parse(PAGE_META.generatedAt) / 1000 - (index + 1) * 3 * 3600,
      },
      hnUrl: `https://news.ycombinator.com/item?id=${id}`,
      articleSummary: sample.article === undefined ? ARTICLE : sample.article,
      articleSource: sample.article === null ? null : sample.site ? "article" : "post",
      discussionSummary: sample.discussion === undefined ? DISCUSSION : sample.discussion,
      notes: sample.notes ?? [],
      isNew: sample.isNew,
      pointsSinceLastRun: sample.isNew ? null : 40 + index,
      articleWords: sample.words,
    };
  });
}
