import type { ArticleSource } from "../types.ts";

const ARTICLE_LABELS: Record<ArticleSource, string> = {
  article: "Article",
  post: "Post",
  "article and post": "Article and post",
  description: "Page description",
};

/** The heading of the article half: what its text was made from. */
export function articleLabel(source: ArticleSource | null): string {
  return source === null ? "Article" : ARTICLE_LABELS[source];
}
