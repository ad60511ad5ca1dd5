/** What the benches that start an app process share: its script, and its URL once it listens. */
import { join } from "node:path";

export const APP_SCRIPT = join(import.meta.dir, "..", "scripts", "app.ts");

/** Reads an app process's stderr until its start line, then drains the rest; its base URL. */
export async function listening(stderr: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stderr.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`The app exited before it was ready:\n${text}`);
    text += decoder.decode(value, { stream: true });
    const match = text.match(/on (http:\/\/127\.0\.0\.1:\d+);/);
    if (match?.[1]) {
      // Keep draining its log so a full pipe never blocks it.
      void (async () => {
        while (!(await reader.read()).done) {}
      })();
      return match[1];
    }
  }
}
