import type { DigestMeta, StoryDigest } from "../types.ts";

/**
 * Turns the digest into text piece by piece: `begin` once, `story` as each story is ready
 * (in front-page order), `end` once. A renderer that cannot stream (JSON) returns "" until `end`.
 */
export interface Renderer {
  begin(meta: DigestMeta): string;
  story(digest: StoryDigest, index: number): string;
  /** With `incomplete`, the run stopped early: the text ends saying how many stories it holds. */
  end(incomplete?: Incomplete): string;
}

/** A run that stopped early (Ctrl-C, the model gone): the stories written, of how many. */
export interface Incomplete {
  written: number;
  total: number;
}

/** A whole run rendered to one string (the archive's pages and JSON, the mail's two parts). */
export function renderRun(
  renderer: Renderer,
  run: { meta: DigestMeta; stories: readonly StoryDigest[] },
): string {
  return [
    renderer.begin(run.meta),
    ...run.stories.map((story, index) => renderer.story(story, index)),
    renderer.end(),
  ].join("");
}
