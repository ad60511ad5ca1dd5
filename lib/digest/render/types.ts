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
