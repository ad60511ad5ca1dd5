import { dlopen, FFIType } from "bun:ffi";

/** prctl(2)'s option: the signal this process gets when its parent dies. */
const PR_SET_PDEATHSIG = 1;
const SIGKILL = 9;
/** When the kernel cannot tell (not Linux): how often the parent is looked for while idle. */
const PARENT_CHECK_MS = 1000;

/**
 * Ends this renderer process when `parentPid` dies, even mid-render: a `kill -9` of the app must
 * not leave a child spinning through a template for seconds. On Linux the kernel sends SIGKILL
 * at the parent's death (prctl PR_SET_PDEATHSIG, which no JavaScript loop can delay); elsewhere,
 * and as a second line, the IPC channel closing and a check of the parent pid, both of which
 * wait for the render in progress.
 */
export function dieWithParent(parentPid: number): void {
  armDeathSignal();
  // The parent may have died before the signal was armed: then this process is already an orphan.
  if (Number.isInteger(parentPid) && process.ppid !== parentPid) end();
  process.on("disconnect", end);
  if (Number.isInteger(parentPid)) {
    setInterval(() => {
      if (process.ppid !== parentPid) end();
    }, PARENT_CHECK_MS).unref();
  }
}

/** Ends this process as its parent ends it at a deadline: nobody reads a renderer's exit code. */
function end(): void {
  process.kill(process.pid, "SIGKILL");
}

function armDeathSignal(): void {
  if (process.platform !== "linux") return;
  try {
    const libc = dlopen("libc.so.6", {
      prctl: {
        args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64],
        returns: FFIType.i32,
      },
    });
    libc.symbols.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  } catch {
    // No glibc (musl names it differently): the checks above still end this process, later.
  }
}
