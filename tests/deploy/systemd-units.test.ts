import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { outputOf } from "../fakes/process-output.ts";
import { hasTool } from "../fakes/system-tools.ts";

setDefaultTimeout(30_000);

const UNITS = join(import.meta.dir, "..", "..", "deploy", "systemd");
const files = readdirSync(UNITS).filter((name) => /\.(service|timer)$/.test(name));
const dir = mkdtempSync(join(tmpdir(), "units-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `systemd-analyze verify` on copies (a template is verified through one instance of it). */
async function verify(names: string[]): Promise<{ code: number; output: string }> {
  const child = Bun.spawn(["systemd-analyze", "verify", "--man=no", ...names], {
    cwd: dir,
    stdout: "pipe",
    stderr: "pipe",
  });
  const { stdout, stderr, code } = await outputOf(child);
  return { code, output: (stdout + stderr).trim() };
}

function settings(name: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const line of readFileSync(join(UNITS, name), "utf8").split("\n")) {
    const match = line.match(/^([A-Za-z]+)=(.*)$/);
    if (match?.[1] === undefined) continue;
    found.set(match[1], [...(found.get(match[1]) ?? []), match[2] ?? ""]);
  }
  return found;
}

describe.if(hasTool("systemd-analyze", "systemd units"))("deploy/systemd", () => {
  test("has the app, the worker template, the receiver, the digest and its timer", () => {
    expect(files.sort()).toEqual([
      "hn-digest.service",
      "hn-digest.timer",
      "hn-webhooks-app.service",
      "hn-webhooks-receiver.service",
      "hn-webhooks-worker@.service",
    ]);
  });

  test("systemd-analyze verify finds nothing to say about any unit", async () => {
    for (const name of files) copyFileSync(join(UNITS, name), join(dir, name));
    symlinkSync("hn-webhooks-worker@.service", join(dir, "hn-webhooks-worker@1.service"));
    const names = files.map((name) =>
      name.endsWith("@.service") ? name.replace("@", "@1") : name,
    );
    // Warnings (an unknown or misspelt key) exit 0 too, so the output must be empty as well.
    expect(await verify(names.map((name) => `./${name}`))).toEqual({ code: 0, output: "" });
  });

  test("verify would catch a misspelt setting", async () => {
    const broken = join(dir, "broken.service");
    writeFileSync(broken, "[Service]\nExecStart=bun scripts/app.ts\nNoNewPrivilegez=yes\n");
    const { output } = await verify(["./broken.service"]);
    expect(output).toContain("Unknown key 'NoNewPrivilegez'");
  });

  test.each(files.filter((name) => name.endsWith(".service")))(
    "%s runs as its own user, from the code's folder, with the usual hardening",
    (name) => {
      const unit = settings(name);
      // The app and its workers share the database's user; the digest and the receiver have
      // users of their own (tests/deploy/systemd-security.test.ts checks what each can read).
      const user = {
        "hn-digest.service": ["hn-daily-digest"],
        "hn-webhooks-receiver.service": undefined,
      };
      expect(unit.get("User")).toEqual(
        name in user ? user[name as keyof typeof user] : ["hn-digest"],
      );
      expect(unit.get("WorkingDirectory")).toEqual(["/opt/hn-digest-webhooks"]);
      expect(unit.get("EnvironmentFile")?.length).toBeGreaterThan(0);
      expect(unit.get("NoNewPrivileges")).toEqual(["yes"]);
      expect(unit.get("ProtectSystem")).toEqual(["strict"]);
      expect(unit.get("PrivateTmp")).toEqual(["yes"]);
      expect(unit.get("ExecStart")?.[0]).toStartWith("bun scripts/");
      const writes = unit.get("ReadWritePaths") ?? [];
      // The receiver writes nothing; the digest its archive; the app and workers the database.
      const folder = {
        "hn-webhooks-receiver.service": [],
        "hn-digest.service": ["/var/lib/hn-daily-digest"],
      };
      expect(writes).toEqual(
        name in folder ? folder[name as keyof typeof folder] : ["/var/lib/hn-digest-webhooks"],
      );
    },
  );
});
