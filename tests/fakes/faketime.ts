import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * Environment that runs a child process with its clock shifted by `offset` (e.g. "+120s",
 * "-2m"), through Debian's libfaketime preloaded directly: the `faketime` wrapper would stay
 * between the test and the process, so signals sent to the child would not reach it.
 */
export function skewedClockEnv(offset: string): Record<string, string> {
  const library = findLibfaketime();
  if (!library) throw new Error("libfaketime not found: apt-get install libfaketime");
  return { LD_PRELOAD: library, FAKETIME: offset };
}

/** Debian's libfaketime (package `libfaketime`, which `faketime` depends on), or null. */
export function findLibfaketime(root = "/usr/lib"): string | null {
  if (!existsSync(root)) return null;
  for (const dir of readdirSync(root)) {
    const candidate = join(root, dir, "faketime", "libfaketime.so.1");
    if (existsSync(candidate)) return candidate;
  }
  return null;
}
