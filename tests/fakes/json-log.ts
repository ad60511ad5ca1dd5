/** One line of a child's JSON log (LOG_FORMAT=json). */
export interface JsonLogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

/**
 * A child's JSON-lines log read as it comes: find() reads on until a line matches (each line is
 * seen once) and throws with what was left when the log ends first. `cleanups` gets the reader's
 * release.
 */
export function jsonLogLines(stream: ReadableStream<Uint8Array>, cleanups: Array<() => unknown>) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  cleanups.push(() => reader.releaseLock());
  return {
    async find(match: (line: JsonLogLine) => boolean): Promise<JsonLogLine> {
      for (;;) {
        const newline = buffered.indexOf("\n");
        if (newline === -1) {
          const { done, value } = await reader.read();
          if (done) throw new Error(`log ended without the line looked for: ${buffered}`);
          buffered += decoder.decode(value, { stream: true });
          continue;
        }
        const line = JSON.parse(buffered.slice(0, newline)) as JsonLogLine;
        buffered = buffered.slice(newline + 1);
        if (match(line)) return line;
      }
    },
  };
}
