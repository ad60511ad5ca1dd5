/**
 * Deletes in batches until a batch comes back short: one short transaction per batch, so
 * workers are never locked out for long. `batch` deletes at most `limit` and says how many.
 */
export async function purgeInBatches(
  batch: (olderThan: number, limit: number) => Promise<number> | number,
  olderThan: number,
  limit: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await batch(olderThan, limit);
    total += deleted;
    if (deleted < limit) return total;
  }
}
