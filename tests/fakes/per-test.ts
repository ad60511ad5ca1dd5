import { afterEach, beforeEach } from "bun:test";

/**
 * For a file or describe: `open()` before each test and `close` after it. What it returns reads
 * through to this test's value (its fields and methods), and throws outside a test.
 */
export function perTest<T extends object>(
  open: () => T | Promise<T>,
  close: (value: T) => unknown,
): T {
  let current: T | undefined;
  beforeEach(async () => {
    current = await open();
  });
  afterEach(async () => {
    const value = current;
    current = undefined;
    if (value) await close(value);
  });
  return new Proxy({} as T, {
    get(_, key) {
      if (!current) throw new Error("perTest: only inside a test");
      const field = Reflect.get(current, key);
      return typeof field === "function" ? field.bind(current) : field;
    },
  });
}
