import type { Subprocess } from "bun";

/** Everything a child wrote to stdout and stderr, read while it runs, and its exit code. */
export async function outputOf(
  child: Subprocess<"ignore" | "pipe" | "inherit", "pipe", "pipe">,
): Promise<{ stdout: string; stderr: string; code: number }> {
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { stdout, stderr, code };
}
