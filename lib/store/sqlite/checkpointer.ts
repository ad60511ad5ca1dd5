import type { Database } from "bun:sqlite";

/** How often the background checkpointer copies the WAL back: small steps, a few MB at most. */
export const CHECKPOINT_INTERVAL_MS = 250;

/**
 * Takes WAL checkpoints off a connection's request path: a thread with its own connection
 * copies the WAL back into the database file every 250 ms (PASSIVE: it never waits for, nor
 * blocks, a writer), and the connection's own automatic checkpoint is turned off. That one ran
 * in the commit that crossed ~40 MB of WAL and synced the files: 5–16 ms during which every
 * request in flight waited (16 concurrent PATCHes with a worker delivering: p99 15–21 ms with
 * it, 10–13 ms without). The WAL is still reset as before: a writer starts it over once a
 * checkpoint (the thread's, or another process's automatic one) has copied it all back.
 * Returns the function that stops the thread.
 */
export function checkpointInBackground(
  db: Database,
  path: string,
  options: {
    intervalMs?: number;
    /** Told each checkpoint's result: frames in the WAL, frames copied back (tests). */
    onCheckpoint?: (result: { log: number; checkpointed: number }) => void;
  } = {},
): () => void {
  const thread = new Worker(new URL("./checkpoint-thread.ts", import.meta.url));
  const { onCheckpoint } = options;
  if (onCheckpoint) thread.onmessage = (event: MessageEvent) => onCheckpoint(event.data);
  const intervalMs = options.intervalMs ?? CHECKPOINT_INTERVAL_MS;
  thread.postMessage({ path, intervalMs, report: onCheckpoint !== undefined });
  // Bun's Worker can be unref'd (not in the DOM typings): it must not keep a process alive.
  (thread as unknown as { unref?: () => void }).unref?.();
  db.run("PRAGMA wal_autocheckpoint = 0");
  return () => thread.terminate();
}
