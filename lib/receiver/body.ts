/**
 * Reads a request's body to its end, keeping at most `keep` bytes but counting them all, so a
 * huge body is shown cut without being held in memory.
 */
export async function readBody(
  request: Request,
  keep: number,
): Promise<{ bytes: Uint8Array; size: number }> {
  const stream = request.body;
  if (stream === null) return { bytes: new Uint8Array(0), size: 0 };
  // A body announced as small enough is read in one go (a few times faster than streaming);
  // Bun stops reading at Content-Length, so the announcement cannot be exceeded.
  const length = request.headers.get("content-length");
  if (length !== null && /^\d+$/.test(length) && Number(length) <= keep) {
    const bytes = new Uint8Array(await request.arrayBuffer());
    return { bytes, size: bytes.length };
  }
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (kept < keep) {
      const part = chunk.subarray(0, keep - kept);
      chunks.push(part);
      kept += part.length;
    }
  }
  const bytes = new Uint8Array(kept);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return { bytes, size };
}
