import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const HAS_TMUX = Bun.which("tmux") !== null;

export interface Terminal {
  /** Resolves with everything shown so far once `pattern` has appeared; rejects if the pane closes first. */
  until(pattern: RegExp): Promise<string>;
  /** Keys as tmux names them: "C-c", "Enter". */
  press(key: string): void;
  close(): void;
}

/**
 * Runs `command` (a shell line) in a real terminal: a detached tmux session, 200 × 50. What the
 * pane shows is read as it comes through a FIFO (pipe-pane), so tests await text, never poll.
 * The command starts only once the pipe is attached, so no output is missed.
 */
export function startInTerminal(command: string, cwd: string): Terminal {
  const dir = mkdtempSync(join(tmpdir(), "terminal-"));
  const fifo = join(dir, "pane.fifo");
  const session = `test-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  Bun.spawnSync(["mkfifo", fifo]);
  Bun.spawnSync([
    "tmux",
    "new-session",
    "-d",
    "-s",
    session,
    "-x",
    "200",
    "-y",
    "50",
    "-c",
    cwd,
    `read _; ${command}`,
  ]);
  const reader = Bun.spawn(["cat", fifo], { stdout: "pipe" });
  Bun.spawnSync(["tmux", "pipe-pane", "-t", session, "-o", `cat > ${fifo}`]);
  Bun.spawnSync(["tmux", "send-keys", "-t", session, "Enter"]);
  const stream = reader.stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  return {
    async until(pattern) {
      while (!pattern.test(text)) {
        const { done, value } = await stream.read();
        if (done) throw new Error(`the pane closed without ${pattern}:\n${text}`);
        text = (text + decoder.decode(value, { stream: true })).replaceAll("\r", "");
      }
      return text;
    },
    press(key) {
      Bun.spawnSync(["tmux", "send-keys", "-t", session, key]);
    },
    close() {
      Bun.spawnSync(["tmux", "kill-session", "-t", session]);
      reader.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
