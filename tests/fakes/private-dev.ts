import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";

/**
 * A child process with a /dev of its own: a folder of the test's bind-mounted over /dev in a
 * private mount namespace (unshare, util-linux; needs root). A test that writes to /dev/stdout
 * then cannot replace the machine's, whatever the code under test does.
 */
export function canUsePrivateDev(): boolean {
  if (process.getuid?.() !== 0 || Bun.which("unshare") === null) return false;
  return Bun.spawnSync(["unshare", "--mount", "--propagation", "private", "true"]).exitCode === 0;
}

/** Fills `dir` as a minimal /dev: the stream links and the devices Bun opens. */
export function makeDev(dir: string): void {
  mkdirSync(dir, { recursive: true });
  symlinkSync("/proc/self/fd/1", join(dir, "stdout"));
  symlinkSync("/proc/self/fd/2", join(dir, "stderr"));
  symlinkSync("/proc/self/fd", join(dir, "fd"));
  for (const [name, minor] of [
    ["null", 3],
    ["zero", 5],
    ["random", 8],
    ["urandom", 9],
  ] as const) {
    Bun.spawnSync(["mknod", "-m", "666", join(dir, name), "c", "1", String(minor)]);
  }
}

/** The command line that runs `argv` with `dev` mounted as /dev. */
export function withPrivateDev(dev: string, argv: string[]): string[] {
  return [
    "unshare",
    "--mount",
    "--propagation",
    "private",
    "--",
    "sh",
    "-c",
    'mount --bind "$0" /dev && exec "$@"',
    dev,
    ...argv,
  ];
}
