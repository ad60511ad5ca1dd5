import type { StoryDigest } from "../../lib/digest/types.ts";

type StoryDigestOptions = Omit<Partial<StoryDigest>, "story"> & {
  story?: Partial<StoryDigest["story"]>;
};

/**
 * A story digest as the renderers get one: the allocator article (HN item 101, 512 points, 230
 * comments), no summaries or notes yet; `options` change the digest's fields and its story's.
 */
export function allocatorDigest(options: StoryDigestOptions = {}): StoryDigest {
  const { story, ...digest } = options;
  return {
    story: {
      id: 101,
      title: "A faster allocator",
      url: "https://example.com/malloc",
      storyText: null,
      author: "ada",
      points: 512,
      numComments: 230,
      type: "article",
      site: "example.com",
      createdAt: 1754236481,
      ...story,
    },
    hnUrl: "https://news.ycombinator.com/item?id=101",
    articleSummary: null,
    articleSource: "article",
    discussionSummary: null,
    notes: [],
    isNew: false,
    pointsSinceLastRun: null,
    ...digest,
  };
}
