/**
 * Which of a run's stories a time budget keeps: the first ones, as many as fit. Planned at the
 * assumed rates before the first answer (budget-plan.ts), then re-made at the measured rates
 * each time a story's turn comes, so a machine faster than assumed keeps stories the first plan
 * cut and a slower one leaves out the last ones rather than overrunning.
 */

export interface StoryKeeperOptions {
  /** The run's stories, in front-page order. */
  stories: number;
  /** Stories kept until an answer measures the machine; default every one. */
  keep?: number;
  /** An answer has measured the machine. */
  measured: () => boolean;
  /** Model time left (s). */
  secondsLeft: () => number;
  /** Seconds the story's calls still to come take at their floor; 0 when none are to come. */
  floorSeconds: (story: number) => number;
}

export interface StoryKeeper {
  /** How many of the first stories are kept now. */
  kept(): number;
  /**
   * Whether the story may make its call now: a story already admitted always may; another while
   * it is kept. A story refused is left out with every story after it, for good.
   */
  admits(story: number): boolean;
}

export function createStoryKeeper(options: StoryKeeperOptions): StoryKeeper {
  const admitted = new Set<number>();
  let refusedFrom = options.stories;
  const kept = (): number => {
    if (!options.measured()) return Math.min(refusedFrom, options.keep ?? options.stories);
    let seconds = options.secondsLeft();
    let count = 0;
    for (; count < refusedFrom; count++) {
      const cost = options.floorSeconds(count);
      if (cost > seconds && !admitted.has(count)) break;
      seconds -= cost;
    }
    return count;
  };
  return {
    kept,
    admits(story) {
      if (admitted.has(story)) return true;
      if (story < kept()) {
        admitted.add(story);
        return true;
      }
      refusedFrom = Math.min(refusedFrom, story);
      return false;
    },
  };
}
