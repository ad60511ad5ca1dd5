import { existsSync } from "node:fs";
import { findLibfaketime } from "./faketime.ts";

/**
 * The system tools some suites need beyond Bun, each with the Debian package that brings it.
 * `bash .ci/run` installs them all; a developer's machine may lack any of them.
 */
const TOOLS = {
  chromium: { package: "chromium", present: () => existsSync("/usr/bin/chromium") },
  tmux: { package: "tmux", present: () => Bun.which("tmux") !== null },
  faketime: { package: "libfaketime", present: () => findLibfaketime() !== null },
  python3: { package: "python3", present: () => Bun.which("python3") !== null },
  "systemd-analyze": { package: "systemd", present: () => Bun.which("systemd-analyze") !== null },
} as const;

export type SystemTool = keyof typeof TOOLS;

/** The one line a skipped suite prints: what is missing and which package brings it. */
export function missingToolLine(suite: string, what: string, debianPackage: string): string {
  return `[skip] ${suite}: ${what} is missing (apt-get install ${debianPackage})`;
}

const warned = new Set<string>();

/**
 * Whether tests needing `tool` can run. Missing, they are skipped with one line naming the
 * package, printed once per suite; under CI=true (where .ci/run installs every tool) they run
 * anyway, so a missing tool fails them loudly instead of hiding them.
 */
export function hasTool(tool: SystemTool, suite: string): boolean {
  if (TOOLS[tool].present() || process.env.CI === "true") return true;
  const line = missingToolLine(suite, tool, TOOLS[tool].package);
  if (!warned.has(line)) console.warn(line);
  warned.add(line);
  return false;
}
