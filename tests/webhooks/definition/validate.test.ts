import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  checkCaFile,
  checkEvents,
  checkHeader,
  checkHeaderLines,
  checkMaxPerSecond,
  checkMethod,
  checkName,
  checkOrdered,
  checkTimeoutMs,
  checkUrl,
} from "../../../lib/webhooks/definition/validate.ts";
import { checkCaFileContent } from "../../../lib/webhooks/sending/ca-file.ts";

async function problemOf(path: string): Promise<string> {
  const checked = await checkCaFileContent(path);
  return checked.ok ? "" : checked.problem;
}

const CA_FILE = join(import.meta.dir, "..", "..", "fakes", "tls", "hook-test.crt");

describe("the webhook field rules give a value or one problem per field", () => {
  test.each([
    [checkName("  hook  "), { ok: true, value: "hook" }],
    [checkName(""), { ok: false, problem: "required" }],
    [checkName("x".repeat(101)), { ok: false, problem: "must be at most 100 characters" }],
    [checkUrl(" http://a.example/ "), { ok: true, value: "http://a.example/" }],
    [
      checkUrl("https://a.example/{{ data.id }}"),
      { ok: true, value: "https://a.example/{{ data.id }}" },
    ],
    [checkMethod("put"), { ok: true, value: "PUT" }],
    [checkEvents(["item.created", "*"]), { ok: true, value: ["*"] }],
    [checkEvents([" "]), { ok: false, problem: "choose at least one event" }],
    [checkHeader("X-A: b"), { ok: true, value: ["X-A", "b"] }],
    [checkMaxPerSecond(""), { ok: true, value: null }],
    [checkMaxPerSecond("none"), { ok: true, value: null }],
    [checkMaxPerSecond("2.5"), { ok: true, value: 2.5 }],
    [checkTimeoutMs("0"), { ok: true, value: null }],
    [checkCaFile("none"), { ok: true, value: null }],
    [checkOrdered(true), { ok: true, value: true }],
    [checkOrdered("yes"), { ok: false, problem: "must be true or false" }],
  ])("%j", (checked, expected) => {
    expect(checked).toEqual(expected as typeof checked);
  });

  test("a header text area names the line of its problem", () => {
    expect(checkHeaderLines("X-A: 1\n\nHost: evil")).toEqual({
      ok: false,
      problem: "line 3: Host is set by the sender and can not be replaced",
    });
  });

  test("a CA file must be a regular file of PEM certificates: a FIFO is refused at once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ca-file-"));
    try {
      const fifo = join(dir, "ca.fifo");
      expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
      expect(await checkCaFileContent(fifo)).toEqual({
        ok: false,
        problem: `cannot use "${fifo}": not a regular file (a FIFO)`,
      });
      const text = join(dir, "ca.pem");
      writeFileSync(text, "hello");
      expect(await problemOf(text)).toMatch(/no PEM certificate/);
      const broken = join(dir, "broken.pem");
      writeFileSync(broken, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
      expect(await problemOf(broken)).toMatch(/certificate 1 does not parse/);
      const big = join(dir, "big.pem");
      writeFileSync(big, Buffer.alloc(1024 * 1024 + 1, 65));
      expect(await problemOf(big)).toMatch(/larger than 1048576 bytes/);
      expect(await problemOf(join(dir, "none.pem"))).toMatch(/no such file/);
      expect(await problemOf("/dev/zero")).toMatch(/a device/);
      expect(await checkCaFileContent(CA_FILE)).toMatchObject({ ok: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
