import { describe, expect, test } from "bun:test";
import {
  BodyTooLargeError,
  readBodyCapped,
  readTextCapped,
} from "../../../lib/digest/fetch/body.ts";
import { endlessResponse } from "../../fakes/digest-world.ts";

describe("readBodyCapped()", () => {
  test("stops an endless body just past the cap and cancels the rest", async () => {
    const { response, state } = endlessResponse();
    const error = await readBodyCapped(response, 1_000_000).catch((caught) => caught);
    expect(error).toBeInstanceOf(BodyTooLargeError);
    expect((error as Error).message).toBe("the answer is larger than 1000000 bytes");
    expect(state.cancelled).toBe(true);
    expect(state.bytesSent).toBeLessThan(1_200_000);
  });

  test("refuses a declared Content-Length over the cap without reading", async () => {
    let pulled = 0;
    const body = new ReadableStream({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(10));
      },
    });
    const response = new Response(body, { headers: { "content-length": "5000" } });
    await expect(readBodyCapped(response, 4096)).rejects.toThrow("larger than 4 KiB");
    expect(pulled).toBeLessThanOrEqual(1);
  });

  test("reads a body of exactly the cap, across chunks", async () => {
    const parts = [new Uint8Array([104, 105]), new Uint8Array([33])];
    const body = new ReadableStream({
      start(controller) {
        for (const part of parts) controller.enqueue(part);
        controller.close();
      },
    });
    expect(await readTextCapped(new Response(body), 3)).toBe("hi!");
  });
});
