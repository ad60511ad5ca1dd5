/**
 * What of an answer an attempt records: the body and the headers, each cut to a limit (a huge
 * body is cancelled, not read), and the error line of a status that is no success.
 */

/** The body's text: small and announced (the usual answer) in one read, else readLimited. */
export async function readBody(response: Response, limit: number): Promise<string | null> {
  const announced = Number(response.headers.get("content-length") ?? Number.NaN);
  if (!(announced > 0 && announced <= limit)) return readLimited(response, limit, announced);
  // No stream (even response.body, a getter that makes one, is left alone), nothing to cut;
  // the status already arrived, so a body that breaks off keeps the attempt an answer.
  try {
    return await response.text();
  } catch {
    return "";
  }
}

/** "HTTP 503 Service Unavailable", and where a redirect pointed (redirects are not followed). */
export function httpError(response: Response): string {
  const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
  if (response.status >= 300 && response.status <= 399) {
    const location = response.headers.get("location");
    return `${status}: redirects are not followed${location ? ` (Location: ${cut(location, 512)})` : ""}`;
  }
  return status;
}

/**
 * Reads at most `limit` bytes of a body not known to be small, then cancels the rest (a huge
 * body costs nothing). The status already arrived, so a body that breaks off (reset, timeout)
 * keeps what was read.
 */
async function readLimited(
  response: Response,
  limit: number,
  announced: number,
): Promise<string | null> {
  if (!response.body) return null;
  if (announced === 0) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
    if (size >= limit) await reader.cancel();
  } catch {
    await reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(Math.min(size, limit));
  let offset = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, bytes.length - offset);
    bytes.set(part, offset);
    offset += part.byteLength;
    if (offset >= bytes.length) break;
  }
  return decodeCut(bytes);
}

/** `name: value` lines, cut to `limit` UTF-8 bytes. */
export function headerLines(headers: Headers, limit: number): string {
  let text = "";
  for (const [name, value] of headers) {
    text = text === "" ? `${name}: ${value}` : `${text}\n${name}: ${value}`;
  }
  return cut(text, limit);
}

/** `text` cut to at most `limit` UTF-8 bytes. */
function cut(text: string, limit: number): string {
  // A UTF-16 code unit is at most 3 UTF-8 bytes: short text needs no encoding to know it fits.
  if (text.length * 3 <= limit) return text;
  const bytes = new TextEncoder().encode(text);
  if (bytes.byteLength <= limit) return text;
  return decodeCut(bytes.subarray(0, limit));
}

/** UTF-8 text of bytes that may end inside a character: `stream` drops the partial tail. */
function decodeCut(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes, { stream: true });
}
