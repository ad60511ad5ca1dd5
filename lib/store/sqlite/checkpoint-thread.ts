import { Database } from "bun:sqlite";

/**
 * The body of the checkpointer thread (checkpointer.ts): its own connection copies the WAL back
 * into the database file every `intervalMs`, PASSIVE so it never waits for, nor blocks, a
 * writer. Told the path and interval in its first message.
 */
declare const self: Worker;

self.onmessage = (event: MessageEvent<{ path: string; intervalMs: number }>) => {
  const { path, intervalMs } = event.data;
  const db = new Database(path);
  db.run("PRAGMA busy_timeout = 1000");
  const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
  setInterval(() => {
    try {
      checkpoint.run();
    } catch {
      // Busy or gone: the next turn tries again; the store closing ends the thread.
    }
  }, intervalMs);
};
