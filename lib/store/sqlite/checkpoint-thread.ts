import { Database } from "bun:sqlite";

/**
 * The body of the checkpointer thread (checkpointer.ts): its own connection copies the WAL back
 * into the database file every `intervalMs`, PASSIVE so it never waits for, nor blocks, a
 * writer. Told the path and interval in its first message, and whether to post each
 * checkpoint's result back (frames in the WAL, frames copied).
 */
declare const self: Worker;

self.onmessage = (event: MessageEvent<{ path: string; intervalMs: number; report: boolean }>) => {
  const { path, intervalMs, report } = event.data;
  const db = new Database(path);
  db.run("PRAGMA busy_timeout = 1000");
  const checkpoint = db.prepare<{ busy: number; log: number; checkpointed: number }, []>(
    "PRAGMA wal_checkpoint(PASSIVE)",
  );
  setInterval(() => {
    try {
      const result = checkpoint.get();
      if (report && result) self.postMessage(result);
    } catch {
      // Busy or gone: the next turn tries again; the store closing ends the thread.
    }
  }, intervalMs);
};
