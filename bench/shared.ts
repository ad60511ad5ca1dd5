import type { ChangeEvent } from "../lib/webhooks/model.ts";
import type { Store } from "../lib/webhooks/ports.ts";

/** The change every webhook benchmark enqueues: an item update with both snapshots. */
export function benchChange(i: number): ChangeEvent {
  const item = { id: i, sku: `SKU-${i}`, name: `Item ${i}`, quantity: i % 50, location: "A1" };
  return {
    event: "item.updated",
    model: "item",
    username: "bench",
    requestId: crypto.randomUUID(),
    data: item,
    prechange: { ...item, quantity: item.quantity + 1 },
    postchange: item,
    timestamp: new Date(),
  };
}

/** Lines of a child process's output as they arrive (the last one even without a newline). */
export async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of stream) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline = buffer.indexOf("\n");
    while (newline !== -1) {
      yield buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
    }
  }
  if (buffer !== "") yield buffer;
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** `jobs` deliveries of benchChange queued in one transaction, 1000 changes per enqueueMany. */
export async function enqueueBench(store: Store, jobs: number): Promise<void> {
  await store.transaction(async (tx) => {
    for (let done = 0; done < jobs; done += 1000) {
      const size = Math.min(1000, jobs - done);
      await tx.queue.enqueueMany(Array.from({ length: size }, (_, i) => benchChange(done + i)));
    }
  });
}
