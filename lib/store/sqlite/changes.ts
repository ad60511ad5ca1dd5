import type { Database } from "bun:sqlite";
import { type FSWatcher, watch } from "node:fs";

/**
 * Waits for work written by anyone (the store's waitForChange), as PostgreSQL's ChangeListener
 * does with LISTEN. The queue and the webhook repo are handed `markSeen` and `notifyLocal`.
 */
export interface ChangeListener {
  /** Called first thing inside every claim transaction: "I have seen the database as of now". */
  markSeen(): void;
  /** Work appeared through this same connection, where `PRAGMA data_version` does not move. */
  notifyLocal(): void;
  waitForChange(options: { timeoutMs: number; signal?: AbortSignal }): Promise<void>;
  close(): void;
}

/** How long the WAL stays watched after the last wait ended. */
const WATCH_LINGER_MS = 1000;

/** Re-checks after a WAL event: the event can come before the commit it belongs to is visible. */
const FOLLOW_UP_MS = [2, 20];

/**
 * Notices work written by other connections without busy polling. `PRAGMA data_version`
 * changes when another connection commits (microseconds to read); it is read when the WAL file
 * changes (inotify through fs.watch, so an idle worker costs nothing and wakes within a
 * millisecond or two) and, as a safety net where file events do not arrive, every `pollMs`
 * while someone waits. Writes through this same connection do not move data_version: the queue
 * reports those (notifyLocal).
 *
 * "Changed" means: since the last claim (markSeen) or the last wake-up.
 */
export function createChangeListener(
  db: Database,
  options: { pollMs: number; busy: () => boolean },
): ChangeListener {
  const dataVersionStmt = db.prepare<{ data_version: number }, []>("PRAGMA data_version");
  const readDataVersion = () => dataVersionStmt.get()?.data_version ?? 0;
  let seenDataVersion = readDataVersion();
  let localVersion = 0;
  let seenLocalVersion = 0;
  const waiters = new Set<() => void>();
  let pollTimer: ReturnType<typeof setTimeout> | undefined;
  let followUps: Array<ReturnType<typeof setTimeout>> = [];
  let watcher: FSWatcher | undefined;
  let unwatchTimer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  function markSeen(): void {
    seenDataVersion = readDataVersion();
    seenLocalVersion = localVersion;
  }

  function wakeAll(): void {
    for (const wake of [...waiters]) wake();
  }

  /** Wakes the waiters if anything changed; a transaction of this process is let finish first. */
  function check(): void {
    if (closed || waiters.size === 0 || options.busy()) return;
    if (localVersion === seenLocalVersion && readDataVersion() === seenDataVersion) return;
    markSeen();
    wakeAll();
  }

  function poll(): void {
    pollTimer = undefined;
    check();
    if (waiters.size > 0 && !closed) pollTimer = setTimeout(poll, options.pollMs);
  }

  function onFileEvent(): void {
    if (waiters.size === 0) return;
    check();
    if (followUps.length > 0) return;
    followUps = FOLLOW_UP_MS.map((ms, i) =>
      setTimeout(() => {
        if (i === FOLLOW_UP_MS.length - 1) followUps = [];
        check();
      }, ms),
    );
  }

  function watchWal(): void {
    if (watcher || closed || !db.filename || db.filename === ":memory:") return;
    try {
      watcher = watch(`${db.filename}-wal`, { persistent: false }, onFileEvent);
      watcher.on("error", () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      // No WAL file yet, or no inotify here: the poll alone finds changes, a little later.
      watcher = undefined;
    }
  }

  /**
   * Nobody has waited for a while (a busy worker): stop watching, or every write to the WAL
   * (dozens per commit, by any process) would wake this process for nothing. The next wait
   * watches again, then checks.
   */
  function unwatchWal(): void {
    unwatchTimer = undefined;
    if (waiters.size > 0) return;
    watcher?.close();
    watcher = undefined;
  }

  function waitForChange(waitOptions: { timeoutMs: number; signal?: AbortSignal }): Promise<void> {
    const { timeoutMs, signal } = waitOptions;
    return new Promise<void>((resolve) => {
      if (closed || signal?.aborted || timeoutMs <= 0) return resolve();
      const done = () => {
        clearTimeout(deadline);
        waiters.delete(done);
        signal?.removeEventListener("abort", done);
        if (waiters.size === 0) {
          clearTimeout(pollTimer);
          pollTimer = undefined;
          clearTimeout(unwatchTimer);
          unwatchTimer = setTimeout(unwatchWal, WATCH_LINGER_MS);
          unwatchTimer.unref?.();
        }
        resolve();
      };
      const deadline = setTimeout(done, timeoutMs);
      signal?.addEventListener("abort", done, { once: true });
      waiters.add(done);
      clearTimeout(unwatchTimer);
      unwatchTimer = undefined;
      watchWal();
      check();
      if (waiters.has(done) && pollTimer === undefined) {
        pollTimer = setTimeout(poll, options.pollMs);
      }
    });
  }

  return {
    markSeen,
    notifyLocal() {
      localVersion++;
      // Woken at once: if the write is part of a transaction still open, the waiter's claim
      // queues behind it on the connection's mutex.
      wakeAll();
    },
    waitForChange,
    close() {
      closed = true;
      clearTimeout(unwatchTimer);
      watcher?.close();
      for (const timer of followUps) clearTimeout(timer);
      clearTimeout(pollTimer);
      wakeAll();
    },
  };
}
