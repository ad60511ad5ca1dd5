/**
 * The units' hardening, as systemd rates it, and who can read the app's database: the digest
 * and the receiver read what the internet sends, so neither may reach app.db (every webhook
 * secret). Which user a unit runs as, and what it may see, is read from the unit files and the
 * install steps in docs/operations.md.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { outputOf } from "../fakes/process-output.ts";
import { hasTool } from "../fakes/system-tools.ts";

// systemd-analyze security reads the unit and its drop-ins: a second or two, more under load.
setDefaultTimeout(60_000);

const ROOT = join(import.meta.dir, "..", "..");
const UNITS = join(ROOT, "deploy", "systemd");
const services = readdirSync(UNITS).filter((name) => name.endsWith(".service"));
const MAX_EXPOSURE = 2.5;
const APP = "hn-webhooks-app.service";
/** The units that must never read the database. */
const OUTSIDERS = ["hn-digest.service", "hn-webhooks-receiver.service"];

type Unit = Map<string, string[]>;

function unitFile(name: string): Unit {
  const found: Unit = new Map();
  for (const line of readFileSync(join(UNITS, name), "utf8").split("\n")) {
    const match = line.match(/^([A-Za-z]+)=(.*)$/);
    if (match?.[1] === undefined) continue;
    found.set(match[1], [...(found.get(match[1]) ?? []), match[2] ?? ""]);
  }
  return found;
}

function last(unit: Unit, key: string): string | undefined {
  return unit.get(key)?.at(-1);
}

/** Space-separated values of every line of a key, "-" (ignore if missing) taken off. */
function paths(unit: Unit, key: string): string[] {
  return (unit.get(key) ?? []).flatMap((line) =>
    line
      .split(/\s+/)
      .filter(Boolean)
      .map((path) => path.replace(/^[-+]/, "")),
  );
}

/** The exposure `systemd-analyze security --offline=true` gives a unit, 0 (best) to 10. */
async function exposure(dir: string, name: string): Promise<{ score: number; output: string }> {
  const child = Bun.spawn(["systemd-analyze", "security", "--offline=true", `./${name}`], {
    cwd: dir,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, SYSTEMD_COLORS: "0", SYSTEMD_PAGER: "" },
  });
  const { stdout, stderr } = await outputOf(child);
  const output = stdout + stderr;
  const match = output.match(/Overall exposure level for \S+: (\d+(?:\.\d+)?)/);
  if (match?.[1] === undefined) throw new Error(`No exposure level in:\n${output}`);
  return { score: Number(match[1]), output };
}

/**
 * The database's folder as the install steps make it (`install -d -m MODE -o USER … FOLDER`),
 * for the folder DATABASE_URL names in docs/operations.md.
 */
function databaseFolderFromDocs(): { folder: string; mode: number; owner: string } {
  const docs = readFileSync(join(ROOT, "docs", "operations.md"), "utf8");
  const url = docs.match(/^DATABASE_URL=(\/\S+)\/app\.db$/m)?.[1];
  if (url === undefined) throw new Error("docs/operations.md names no SQLite DATABASE_URL");
  const install = docs
    .split("\n")
    .map((line) => line.match(/^install -d -m (0?[0-7]{3,4}) -o (\S+) -g \S+ (\S+)$/))
    .find((match) => match?.[3] === url);
  if (install?.[1] === undefined || install[2] === undefined) {
    throw new Error(`docs/operations.md does not make ${url} with install -d -m … -o …`);
  }
  return { folder: url, mode: Number.parseInt(install[1], 8), owner: install[2] };
}

describe.if(hasTool("systemd-analyze", "systemd unit security"))("deploy/systemd security", () => {
  const dir = mkdtempSync(join(tmpdir(), "units-security-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  for (const name of readdirSync(UNITS)) copyFileSync(join(UNITS, name), join(dir, name));
  // A template is rated through one instance of it.
  symlinkSync("hn-webhooks-worker@.service", join(dir, "hn-webhooks-worker@1.service"));

  test.each(services)(
    `%s is rated at most ${MAX_EXPOSURE} by systemd-analyze security`,
    async (name) => {
      const { score, output } = await exposure(dir, name.replace("@.", "@1."));
      // The output names each directive that costs points: shown when the score is too high.
      expect(score > MAX_EXPOSURE ? output : "").toBe("");
      expect(score).toBeLessThanOrEqual(MAX_EXPOSURE);
    },
  );

  test("the check tells a weak unit: the same service without its hardening scores high", async () => {
    const weak = "weak.service";
    const text = readFileSync(join(UNITS, APP), "utf8")
      .split("\n")
      .filter((line) => !/^(SystemCallFilter|Private\w+|Protect\w+|Restrict\w+)=/.test(line))
      .join("\n");
    await Bun.write(join(dir, weak), text);
    expect((await exposure(dir, weak)).score).toBeGreaterThan(MAX_EXPOSURE);
  });
});

describe("deploy/systemd: filters Bun tolerates", () => {
  test.each(services)("%s filters system calls and leaves Bun's JIT its memory", (name) => {
    const unit = unitFile(name);
    expect(unit.get("SystemCallFilter")).toEqual(["@system-service", "~@privileged @resources"]);
    expect(unit.get("SystemCallErrorNumber")).toEqual(["EPERM"]);
    expect(unit.get("SystemCallArchitectures")).toEqual(["native"]);
    // JavaScriptCore writes machine code into memory it then runs: this would stop Bun.
    expect(unit.get("MemoryDenyWriteExecute")).toBeUndefined();
    expect(unit.get("CapabilityBoundingSet")).toEqual([""]);
    expect(unit.get("NoNewPrivileges")).toEqual(["yes"]);
  });
});

describe("deploy/systemd: who can read the database's folder", () => {
  const database = databaseFolderFromDocs();
  const app = unitFile(APP);

  test("the folder is the app's user's alone: made 0700 by the docs and by the app's unit", () => {
    expect(database.folder).toBe("/var/lib/hn-digest-webhooks");
    expect(database.mode & 0o077).toBe(0);
    expect(database.owner).toBe(last(app, "User") ?? "");
    // StateDirectory= makes (and on each start re-chmods) /var/lib/NAME with this mode.
    expect(app.get("StateDirectory")).toEqual([database.folder.replace("/var/lib/", "")]);
    expect(Number.parseInt(last(app, "StateDirectoryMode") ?? "0755", 8) & 0o077).toBe(0);
  });

  test.each(services)("%s runs as the folder's owner only if it needs the database", (name) => {
    const unit = unitFile(name);
    const dynamic = last(unit, "DynamicUser") === "yes";
    const user = dynamic ? undefined : (last(unit, "User") ?? "root");
    if (!OUTSIDERS.includes(name)) {
      expect(user).toBe(database.owner);
      return;
    }
    // Not the owner, not root, and no group that could open it (its mode gives groups nothing
    // anyway): owner-only mode bits then leave the folder closed to this user.
    expect(user).not.toBe(database.owner);
    expect(user).not.toBe("root");
    const groups = [...paths(unit, "Group"), ...paths(unit, "SupplementaryGroups")];
    expect(groups).not.toContain(database.owner);
    // No capability could override the mode (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH).
    expect(unit.get("CapabilityBoundingSet")).toEqual([""]);
    expect(unit.get("AmbientCapabilities")).toBeUndefined();
    // Nothing opens a way in: no path of the folder made readable, bound or writable, and no
    // directory systemd would chown to this user (a DynamicUser's StateDirectory= is chowned).
    const inside = (path: string) =>
      path === database.folder ||
      path.startsWith(`${database.folder}/`) ||
      database.folder.startsWith(`${path}/`);
    for (const key of ["ReadWritePaths", "ReadOnlyPaths", "BindPaths", "BindReadOnlyPaths"]) {
      expect({ key, paths: paths(unit, key).filter(inside) }).toEqual({ key, paths: [] });
    }
    const states = paths(unit, "StateDirectory").map((folder) => `/var/lib/${folder}`);
    expect(states.filter(inside)).toEqual([]);
    // And the folder is hidden from it besides.
    expect(paths(unit, "InaccessiblePaths")).toContain(database.folder);
  });
});
