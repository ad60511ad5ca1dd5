import { expect } from "bun:test";
import { ConfigError } from "../../lib/config/errors.ts";

/**
 * The message of the ConfigError `load` throws; the test fails if it returns, or throws anything
 * else.
 */
export function configErrorOf(load: () => unknown): string {
  let error: unknown;
  try {
    load();
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(ConfigError);
  return (error as Error).message;
}
