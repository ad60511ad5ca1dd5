/**
 * A child's output read as it comes, so a test awaits what it prints instead of sleeping:
 * until() resolves with the first match of `pattern` (a regex, or a text to find) in all read so
 * far, rest() reads on to the end and gives it all, close() stops reading (the child's next write
 * then fails as after `| head`), release() hands the stream back; `text` is what was read.
 */
export function outputReader(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  async function readMore(): Promise<boolean> {
    const { done, value } = await reader.read();
    if (!done) text += decoder.decode(value, { stream: true });
    return !done;
  }
  return {
    get text() {
      return text;
    },
    async until(pattern: RegExp | string): Promise<RegExpMatchArray> {
      const regex =
        typeof pattern === "string"
          ? new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
          : pattern;
      for (;;) {
        const match = text.match(regex);
        if (match) return match;
        if (!(await readMore())) {
          throw new Error(`output ended without ${regex}: ${JSON.stringify(text)}`);
        }
      }
    },
    async rest(): Promise<string> {
      while (await readMore()) {}
      return text;
    },
    async close(): Promise<void> {
      await reader.cancel();
    },
    release(): void {
      reader.releaseLock();
    },
  };
}
