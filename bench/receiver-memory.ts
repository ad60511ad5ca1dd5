/**
 * bench:receiver: the receiver's peak memory while signed bodies arrive at once. Starts
 * `bun scripts/receiver.ts --secret …` as its own process, sends BENCH_BODIES bodies of
 * BENCH_BODY_MB each concurrently, then prints its resident memory before and at peak (VmHWM,
 * Linux). With --secret the receiver hashes each body as it streams in and keeps only 64 KiB.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { generateSecret, standardWebhookHeaders } from "../lib/webhooks/sending/signing.ts";

const bodies = Number(process.env.BENCH_BODIES ?? 4);
const bodyMb = Number(process.env.BENCH_BODY_MB ?? 50);
const root = join(import.meta.dir, "..");
const secret = generateSecret();

const receiver = Bun.spawn(
  ["bun", join(root, "scripts/receiver.ts"), "--port", "0", "--secret", secret, "--no-headers"],
  { stdout: "pipe", stderr: "inherit" },
);
const reader = receiver.stdout.getReader();
const decoder = new TextDecoder();
let started = "";
while (!/Listening on port (\S+)\./.test(started)) {
  const { value, done } = await reader.read();
  if (done) throw new Error(`the receiver exited before listening: ${started}`);
  started += decoder.decode(value);
}
const url = /Listening on port (\S+)\./.exec(started)?.[1] ?? "";
// Keep reading what it prints, so a full pipe never stalls it.
const printed = (async () => {
  let signatures = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return signatures;
    signatures += decoder.decode(value).split("Signature: valid").length - 1;
  }
})();

function residentMb(field: "VmRSS" | "VmHWM"): number {
  const status = readFileSync(`/proc/${receiver.pid}/status`, "utf8");
  return Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024);
}

const body = `{"data":"${"x".repeat(bodyMb * 1024 * 1024)}"}`;
const headers = standardWebhookHeaders({
  secret,
  messageId: "msg_bench",
  timestamp: Math.floor(Date.now() / 1000),
  body,
});
const before = residentMb("VmRSS");
const sendStart = performance.now();
await Promise.all(
  Array.from({ length: bodies }, () =>
    fetch(url, { method: "POST", headers, body }).then((response) => response.text()),
  ),
);
const seconds = (performance.now() - sendStart) / 1000;
const peak = residentMb("VmHWM");
receiver.kill("SIGTERM");
await receiver.exited;
const valid = await printed;
console.log(
  `receiver --secret, ${bodies} × ${bodyMb} MB at once: RSS ${before} MB before, peak ${peak} MB; ${valid}/${bodies} signatures valid; ${seconds.toFixed(2)} s`,
);
