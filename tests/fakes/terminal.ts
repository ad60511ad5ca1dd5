import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

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
 * That text is the program's raw output, escape sequences such as colours included (unlike
 * capture-pane without -e). The command starts only once the pipe is attached, and the pane
 * stays open after it (until close()), so no output is missed at either end.
 */
export function startInTerminal(command: string, cwd: string): Terminal {
  const dir = mkdtempSync(join(tmpdir(), "terminal-"));
  const fifo = join(dir, "pane.fifo");
  // A tmux server of its own (-S): test runs side by side never share or stop each other's.
  const socket = join(dir, "tmux.sock");
  const tmux = (...args: string[]) => {
    const result = Bun.spawnSync(["tmux", "-S", socket, ...args], { stderr: "pipe" });
    if (result.exitCode !== 0) {
      throw new Error(`tmux ${args[0]} failed: ${result.stderr.toString().trim()}`);
    }
  };
  Bun.spawnSync(["mkfifo", fifo]);
  tmux(
    "new-session",
    "-d",
    "-s",
    "test",
    "-x",
    "200",
    "-y",
    "50",
    "-c",
    cwd,
    // Ctrl-C signals the whole foreground process group, this shell too: with a trap (reset to
    // the default in the command it starts) the shell outlives the key and prints what follows.
    `trap true INT; read _; ${command}; read _`,
  );
  const reader = Bun.spawn(["cat", fifo], { stdout: "pipe" });
  tmux("pipe-pane", "-t", "test", "-o", `cat > ${fifo}`);
  tmux("send-keys", "-t", "test", "Enter");
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
      tmux("send-keys", "-t", "test", key);
    },
    close() {
      Bun.spawnSync(["tmux", "-S", socket, "kill-server"]);
      reader.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
