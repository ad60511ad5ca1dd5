import { describe, expect, test } from "bun:test";
import {
  createCalibration,
  MIN_SAMPLE_TOKENS,
  tokenScale,
  UNCALIBRATED_RATIO,
  usableSample,
} from "../../../lib/digest/summarise/calibration.ts";

const article = (estimated: number, counted: number) =>
  ({ kind: "article", estimated, counted }) as const;
const discussion = (estimated: number, counted: number) =>
  ({ kind: "discussion", estimated, counted }) as const;

describe("tokenScale()", () => {
  test("is 1 before any long prompt was answered", () => {
    expect(tokenScale([], "article")).toBe(1);
    expect(tokenScale([article(MIN_SAMPLE_TOKENS - 1, 50)], "article")).toBe(1);
  });

  test("takes the highest ratio of the kind's samples, with a margin", () => {
    const samples = [article(1000, 660), article(1000, 700), discussion(1000, 720)];
    expect(tokenScale(samples, "article")).toBeCloseTo(0.73, 5);
    expect(tokenScale(samples, "discussion")).toBeCloseTo(0.75, 5);
  });

  test("borrows the other kind's samples until its own come in", () => {
    expect(tokenScale([article(1000, 700)], "discussion")).toBeCloseTo(0.73, 5);
  });

  test("rises above 1 for a model whose tokenizer counts more than the estimate", () => {
    expect(tokenScale([article(1000, 1300)], "article")).toBeCloseTo(1.33, 5);
  });

  test("ignores counts that cannot be the prompt's (none, or a cut one)", () => {
    expect(tokenScale([article(1000, 10), article(1000, 700)], "article")).toBeCloseTo(0.73, 5);
    expect(usableSample(article(4000, 4090), 4096)).toBe(false);
    expect(usableSample(article(4000, 3000), 4096)).toBe(true);
  });
});

describe("createCalibration()", () => {
  test("holds each kind's scale from the cache's samples for the run", () => {
    const calibration = createCalibration([article(1000, 700), discussion(1000, 760)]);
    expect(calibration.scale("article")).toBeCloseTo(0.73, 5);
    expect(calibration.scale("discussion")).toBeCloseTo(0.79, 5);
    expect(createCalibration().scale("article")).toBe(1);
  });

  test("expects the uncalibrated estimate to err high, a calibrated one to be about right", () => {
    const none = createCalibration();
    expect(none.scale("discussion")).toBe(1);
    expect(none.expectedRatio("discussion")).toBe(UNCALIBRATED_RATIO);
    const some = createCalibration([article(1000, 700)]);
    expect(some.scale("discussion")).toBeCloseTo(0.73, 5);
    expect(some.expectedRatio("article")).toBe(1);
    expect(some.expectedRatio("discussion")).toBe(1);
    // A short prompt says nothing of the tokenizer: still uncalibrated.
    const short = createCalibration([article(MIN_SAMPLE_TOKENS - 1, 150)]);
    expect(short.expectedRatio("article")).toBe(UNCALIBRATED_RATIO);
  });
});
