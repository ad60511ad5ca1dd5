import { abortableSleep, type Sleep } from "../async/sleep.ts";

/** How often a worker checks that its SQLite path still names the file it opened (a stat). */
export const DATABASE_FILE_CHECK_MS = 1000;

/** The database file went away under a running worker; the worker stopped because of it. */
export class DatabaseFileError extends Error {
  override name = "DatabaseFileError";
}

/**
 * Calls `problem()` every `intervalMs` until `signal` aborts, and `onLost` with the first
 * problem it reports. A real timer by default: it must not count as a sleep of a fake clock.
 */
export async function watchDatabaseFile(options: {
  problem: () => string | null;
  onLost: (reason: string) => void;
  signal: AbortSignal;
  intervalMs?: number;
  sleep?: Sleep;
}): Promise<void> {
  const sleep = options.sleep ?? abortableSleep;
  const intervalMs = options.intervalMs ?? DATABASE_FILE_CHECK_MS;
  while (!options.signal.aborted) {
    await sleep(intervalMs, options.signal);
    if (options.signal.aborted) return;
    const reason = options.problem();
    if (reason !== null) {
      options.onLost(reason);
      return;
    }
  }
}

/** The one line the worker ends with. */
export function databaseFileError(reason: string): DatabaseFileError {
  return new DatabaseFileError(
    `Worker stopped: ${reason} while it ran, so what it wrote would never be seen; restore the file (or let the worker create a new one) and start the worker again`,
  );
}
