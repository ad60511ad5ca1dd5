import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { CommandDef } from "citty";
import { renderHelp } from "../../lib/cli/help.ts";
import { createDigestCommand } from "../../lib/digest/command.ts";
import { createReceiverCommand } from "../../lib/receiver/command.ts";

const ROOT = join(import.meta.dir, "..", "..");

/** What a reader can type: flags (`--x` and `--no-x` are one switch) and variables. */
interface Surface {
  flags: Set<string>;
  variables: Set<string>;
}

/** Every `--no-x` is the negation of the switch `--x`; -h/--help and -v/--version every command has. */
function normalisedFlag(flag: string): string | undefined {
  if (["-h", "--help", "-v", "--version"].includes(flag)) return undefined;
  return flag.replace(/^--no-/, "--");
}

/** The flags and variables of every table in a doc whose header has a "flag" column. */
export function documentedSurface(markdown: string): Surface {
  const surface: Surface = { flags: new Set(), variables: new Set() };
  let inFlagTable = false;
  for (const line of markdown.split("\n")) {
    if (!line.trimStart().startsWith("|")) {
      inFlagTable = false;
      continue;
    }
    const cells = line.split("|").slice(1, -1);
    if (cells.some((cell) => cell.trim().toLowerCase() === "flag")) {
      inFlagTable = true;
      continue;
    }
    if (!inFlagTable || /^[\s|:-]+$/.test(line)) continue;
    // Only the columns before "default"/"meaning": the flag and the variable.
    for (const cell of cells.slice(0, 2)) {
      for (const [, code] of cell.matchAll(/`([^`]+)`/g)) {
        const word = code?.split(/[\s=]/)[0] ?? "";
        if (word.startsWith("-")) {
          const flag = normalisedFlag(word);
          if (flag) surface.flags.add(flag);
        } else if (/^[A-Z][A-Z0-9_]+$/.test(word)) surface.variables.add(word);
      }
    }
  }
  return surface;
}

/** The flags and variables a command's --help lists. */
export function helpSurface(help: string): Surface {
  const surface: Surface = { flags: new Set(), variables: new Set() };
  let section = "";
  for (const line of help.split("\n")) {
    if (/^\S.*:$/.test(line)) {
      section = line;
      continue;
    }
    if (!line.startsWith("  ")) {
      if (line.trim() !== "") section = "";
      continue;
    }
    const [left = ""] = line.trim().split(/\s{2,}/);
    if (section === "Options:") {
      for (const [flag] of left.matchAll(/--?[a-zA-Z][\w-]*/g)) {
        const name = normalisedFlag(flag);
        if (name) surface.flags.add(name);
      }
    }
    if (section === "Environment:") surface.variables.add(left);
    for (const [, variable] of line.matchAll(/\[env ([A-Z][A-Z0-9_]+)/g)) {
      if (variable) surface.variables.add(variable);
    }
  }
  return surface;
}

const sink = { write() {}, on() {}, off() {} };
const COMMANDS: Array<{ doc: string; command: CommandDef }> = [
  { doc: "docs/digest.md", command: createDigestCommand({ env: {}, stdout: sink, stderr: sink }) },
  { doc: "docs/receiver.md", command: createReceiverCommand({ out: sink }) },
];

describe("docs and --help", () => {
  for (const { doc, command } of COMMANDS) {
    test(`${doc} lists exactly the flags and variables of the command's --help`, async () => {
      const documented = documentedSurface(readFileSync(join(ROOT, doc), "utf8"));
      const help = helpSurface(await renderHelp(command));
      // Neither side may be empty: a parser that found nothing would make the test pass.
      expect(help.flags.size).toBeGreaterThan(3);
      expect(documented.flags.size).toBeGreaterThan(3);
      const missing = (from: Set<string>, inside: Set<string>) =>
        [...from].filter((name) => !inside.has(name)).sort();
      expect({ "in the doc, not in --help": missing(documented.flags, help.flags) }).toEqual({
        "in the doc, not in --help": [],
      });
      expect({ "in --help, not in the doc": missing(help.flags, documented.flags) }).toEqual({
        "in --help, not in the doc": [],
      });
      expect({
        "variables in the doc, not in --help": missing(documented.variables, help.variables),
        "variables in --help, not in the doc": missing(help.variables, documented.variables),
      }).toEqual({
        "variables in the doc, not in --help": [],
        "variables in --help, not in the doc": [],
      });
    });
  }
});

describe("the parity test's readers", () => {
  test("documentedSurface() reads flags, short flags and variables from a flag table only", () => {
    const doc = [
      "| flag | variable | default |",
      "| --- | --- | --- |",
      "| `--limit`, `-n` | | `10` |",
      "| `--port N` | `PORT` | `9000` |",
      "| `--no-cache` | | on |",
      "| | `XDG_CACHE_HOME` | `~/.cache` |",
      "",
      "| other | table |",
      "| `--not-a-flag` | `NOR_THIS` |",
    ].join("\n");
    const surface = documentedSurface(doc);
    expect([...surface.flags].sort()).toEqual(["--cache", "--limit", "--port", "-n"]);
    expect([...surface.variables].sort()).toEqual(["PORT", "XDG_CACHE_HOME"]);
  });

  test("helpSurface() reads options, [env …] brackets and the Environment section", () => {
    const help = [
      "tool 1.0: does things",
      "",
      "Usage: tool [options]",
      "",
      "Options:",
      "  -n, --limit=<n>  how many [env TOOL_LIMIT, default 10]",
      "  --cache          use the cache",
      "  --no-cache       do not",
      "  -h, --help       show this help",
      "",
      "Environment:",
      "  TOOL_HOSTS  which hosts",
      "",
      "Exit codes: 0 done, see --verbose elsewhere.",
    ].join("\n");
    const surface = helpSurface(help);
    expect([...surface.flags].sort()).toEqual(["--cache", "--limit", "-n"]);
    expect([...surface.variables].sort()).toEqual(["TOOL_HOSTS", "TOOL_LIMIT"]);
  });
});
