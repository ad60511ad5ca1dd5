import { describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { UsageError } from "../../../lib/config/errors.ts";
import { openArchive } from "../../../lib/digest/render/archive.ts";

describe("openArchive()", () => {
  test("refuses a folder in /dev or /proc before making anything there", async () => {
    const inShm = `/dev/shm/hn-archive-${crypto.randomUUID()}`;
    try {
      for (const dir of [inShm, "/proc/hn-archive", "/dev/stdout"]) {
        const error = await openArchive(dir).catch((caught: Error) => caught);
        expect(error).toBeInstanceOf(UsageError);
        expect((error as Error).message).toStartWith(
          `Archive folder ${dir} (--archive / DIGEST_ARCHIVE) is in /`,
        );
      }
      expect(existsSync(inShm)).toBe(false);
    } finally {
      rmSync(inShm, { recursive: true, force: true });
    }
  });
});
