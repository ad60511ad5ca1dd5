import type { SQL } from "bun";

/**
 * Another PostgreSQL transaction on `sql` that runs `lock` (a `SELECT … FOR UPDATE`) and holds
 * what it locked until `unlock()`; resolves once the rows are locked. `holder` ends with that
 * transaction.
 */
export async function holdRowLock(
  sql: SQL,
  lock: (tx: SQL) => Promise<unknown>,
): Promise<{ unlock(): void; holder: Promise<unknown> }> {
  const held = Promise.withResolvers<void>();
  const locked = Promise.withResolvers<void>();
  const holder = sql.begin(async (tx) => {
    await lock(tx);
    locked.resolve();
    await held.promise;
  });
  // A transaction that fails before it locks rejects here instead of leaving the test waiting.
  await Promise.race([locked.promise, holder]);
  return { unlock: () => held.resolve(), holder };
}
