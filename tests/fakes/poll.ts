/**
 * Reads `read()` again, a turn of the event loop apart, until `ok` holds of what it gives or
 * `withinMs` has passed; resolves with the last reading, for the test to assert on. For what
 * only polling can see: another process's state, a server's own views.
 */
export async function pollUntil<T>(
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  withinMs: number,
): Promise<T> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    const value = await read();
    if (ok(value) || performance.now() > deadline) return value;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
