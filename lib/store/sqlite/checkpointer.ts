/** How often the background checkpointer copies the WAL back: small steps, a few MB at most. */
export const CHECKPOINT_INTERVAL_MS = 250;

/**
 * Takes WAL checkpoints off a connection's request path: a thread with its own connection
 * copies the WAL back into the database file every 250 ms (PASSIVE: it never waits for, nor
 * blocks, a writer). The connection's own automatic checkpoint (every ~40 MB of WAL, in the
 * commit that crosses it) stays as the safety net that resets the WAL; with the thread ahead of
 * it, it finds almost nothing left to copy, instead of stalling every request in flight for
 * tens of ms. Returns the function that stops the thread.
 */
export function checkpointInBackground(
  path: string,
  intervalMs = CHECKPOINT_INTERVAL_MS,
): () => void {
  const thread = new Worker(new URL("./checkpoint-thread.ts", import.meta.url));
  thread.postMessage({ path, intervalMs });
  // Bun's Worker can be unref'd (not in the DOM typings): it must not keep a process alive.
  (thread as unknown as { unref?: () => void }).unref?.();
  return () => thread.terminate();
}
