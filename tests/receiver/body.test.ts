import { describe, expect, test } from "bun:test";
import { readBody } from "../../lib/receiver/body.ts";

function chunked(...chunks: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });
}

const post = (body: BodyInit | null, headers: Record<string, string> = {}) =>
  new Request("http://localhost/", { method: "POST", body, headers });

describe("readBody()", () => {
  test("returns an empty body for a request without one", async () => {
    expect(await readBody(new Request("http://localhost/"), 10)).toEqual({
      bytes: new Uint8Array(0),
      size: 0,
    });
  });

  test("keeps the first bytes of a streamed body and counts all of it", async () => {
    const { bytes, size } = await readBody(post(chunked("abcd", "efgh", "ijkl")), 6);
    expect(new TextDecoder().decode(bytes)).toBe("abcdef");
    expect(size).toBe(12);
  });

  test("reads a body announced within the limit whole", async () => {
    const { bytes, size } = await readBody(post("hello", { "content-length": "5" }), 10);
    expect(new TextDecoder().decode(bytes)).toBe("hello");
    expect(size).toBe(5);
  });

  test("streams a body announced over the limit", async () => {
    const body = "x".repeat(100);
    const { bytes, size } = await readBody(post(body, { "content-length": "100" }), 10);
    expect(bytes).toHaveLength(10);
    expect(size).toBe(100);
  });

  test("holds only the kept bytes of a large streamed body and shows every byte to onChunk", async () => {
    const chunk = "q".repeat(256 * 1024);
    let seen = 0;
    const { bytes, size } = await readBody(post(chunked(chunk, chunk, chunk)), 1000, (part) => {
      seen += part.length;
    });
    expect(size).toBe(3 * chunk.length);
    expect(seen).toBe(3 * chunk.length);
    // A copy, not a view: the 256 KiB chunk it came from can be freed.
    expect(bytes.buffer.byteLength).toBe(1000);
  });
});
