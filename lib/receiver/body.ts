/**
 * Reads a request's body to its end, keeping at most `keep` bytes but counting them all, so a
 * huge body is shown cut without being held in memory. `onChunk` sees every byte as it arrives
 * (the signature check hashes the whole body this way, never holding it).
 */
export async function readBody(
  request: Request,
  keep: number,
  onChunk?: (chunk: Uint8Array) => void,
): Promise<{ bytes: Uint8Array; size: number }> {
  const stream = request.body;
  if (stream === null) return { bytes: new Uint8Array(0), size: 0 };
  // A body announced as small enough is read in one go (a few times faster than streaming);
  // Bun stops reading at Content-Length, so the announcement cannot be exceeded.
  const length = request.headers.get("content-length");
  if (length !== null && /^\d+$/.test(length) && Number(length) <= keep) {
    const bytes = new Uint8Array(await request.arrayBuffer());
    onChunk?.(bytes);
    return { bytes, size: bytes.length };
  }
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    onChunk?.(chunk);
    if (kept < keep) {
      // A copy: a view would keep the whole (possibly large) chunk alive.
      const part = chunk.slice(0, keep - kept);
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
