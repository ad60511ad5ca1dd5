import { describe, expect, test } from "bun:test";
import { type ArgsDef, type CommandDef, defineCommand } from "citty";
import { helpMeta, renderHelp, resolveForHelp, wantsColor } from "../../lib/cli/help.ts";

const add: CommandDef = defineCommand<ArgsDef>({
  meta: { name: "add", description: "Add one" },
  args: {
    name: { type: "string", description: "its name", required: true, valueHint: "name" },
    port: { type: "string", description: "a port", default: "9000" },
    dry: { type: "boolean", description: "change nothing" },
  },
});
const show: CommandDef = defineCommand<ArgsDef>({
  meta: { name: "show", description: "Show one" },
  args: { id: { type: "positional", description: "its id", required: true } },
});
const top = defineCommand({
  meta: helpMeta({
    name: "tool",
    version: "1.2.3",
    description: "A tool",
    environment: [{ name: "TOOL_DB", description: "where it keeps things [default x.db]" }],
    notes: ["Exit codes: 0 done, 2 mistakes."],
  }),
  subCommands: { add, show },
});

describe("renderHelp()", () => {
  test("lists usage, options with defaults, variables, commands and notes, in plain text", async () => {
    expect(await renderHelp(top)).toBe(
      [
        "tool 1.2.3: A tool",
        "",
        "Usage: tool <command>",
        "",
        "Options:",
        "  -h, --help     show this help",
        "  -v, --version  print the version and exit",
        "",
        "Environment:",
        "  TOOL_DB  where it keeps things [default x.db]",
        "",
        "Commands:",
        "  add   Add one",
        "  show  Show one",
        "",
        "Run `tool help <command>` or `tool <command> --help` for a command's options.",
        "",
        "Exit codes: 0 done, 2 mistakes.",
      ].join("\n"),
    );
    const sub = await renderHelp(add, { parents: ["tool"] });
    expect(sub).toContain("Usage: tool add [options]");
    expect(sub).toContain("  --name=<name>  its name (required)");
    expect(sub).toContain("  --port=<port>  a port [default 9000]");
    expect(sub).toContain("  --dry          change nothing");
    expect(await renderHelp(show, { parents: ["tool"] })).toContain("Arguments:\n  <id>  its id");
    // --version answers only at the top, where the version is: a subcommand does not offer it.
    expect(sub).not.toContain("--version");
  });

  test("colours headings and flags only when asked", async () => {
    expect(await renderHelp(add)).not.toContain("\u001b[");
    expect(await renderHelp(add, { color: true })).toContain("\u001b[36m--dry\u001b[39m");
  });
});

describe("wantsColor()", () => {
  test("only on a terminal, and never with NO_COLOR or TERM=dumb", () => {
    expect(wantsColor({ isTTY: true }, {})).toBe(true);
    expect(wantsColor({ isTTY: false }, {})).toBe(false);
    expect(wantsColor({}, {})).toBe(false);
    expect(wantsColor({ isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    expect(wantsColor({ isTTY: true }, { NO_COLOR: "yes" })).toBe(false);
    expect(wantsColor({ isTTY: true }, { TERM: "dumb" })).toBe(false);
  });
});

describe("resolveForHelp()", () => {
  test("finds the subcommand from `add --help` and from `help add`", async () => {
    expect(await resolveForHelp(top, ["add", "--help"])).toEqual({
      command: add,
      parents: ["tool"],
    });
    expect(await resolveForHelp(top, ["help", "show"])).toEqual({
      command: show,
      parents: ["tool"],
    });
    expect(await resolveForHelp(top, ["--help"])).toEqual({ command: top, parents: [] });
    expect(await resolveForHelp(top, ["help", "nope"])).toEqual({
      command: top,
      parents: [],
      unknown: "nope",
    });
  });
});
