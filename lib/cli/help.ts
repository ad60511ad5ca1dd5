import type { ArgsDef, CommandDef, CommandMeta } from "citty";
import type { EnvVarHelp } from "../config/fields.ts";

/** A command's meta plus what help says beyond its flags. */
export interface HelpMeta extends CommandMeta {
  /** Variables the command reads that have no flag of their own. */
  environment?: readonly EnvVarHelp[];
  /** Lines after the options, e.g. exit codes or an example. */
  notes?: readonly string[];
}

/** Typed helper so a command's meta can carry `environment` and `notes` for its help. */
export function helpMeta(meta: HelpMeta): CommandMeta {
  return meta;
}

export interface HelpOptions {
  /** Names of the parent commands, e.g. ["webhooks"] for `webhooks add`. */
  parents?: readonly string[];
  /** Bold headings and cyan flags; only for a terminal without NO_COLOR. */
  color?: boolean;
}

/** Colour for help only on a terminal, and never when NO_COLOR is set (no-color.org). */
export function wantsColor(stream: { isTTY?: boolean }, env: Record<string, string | undefined>) {
  return stream.isTTY === true && !env.NO_COLOR && env.TERM !== "dumb";
}

/**
 * The help of one command, written from its citty definition: what it does, its usage, every
 * flag (each description names its variable and default), the variables it reads, and its
 * subcommands. citty's own renderUsage colours whatever the stream is, hence this.
 */
export async function renderHelp(command: CommandDef, options: HelpOptions = {}): Promise<string> {
  const style = styles(options.color === true);
  const meta = ((await resolve(command.meta)) ?? {}) as HelpMeta;
  const args = ((await resolve(command.args)) ?? {}) as ArgsDef;
  const subCommands = (await resolve(command.subCommands)) ?? {};
  const name = [...(options.parents ?? []), meta.name ?? ""].filter(Boolean).join(" ");

  const positionals: string[] = [];
  const argumentRows: Array<[string, string]> = [];
  const optionRows: Array<[string, string]> = [];
  for (const [argName, def] of Object.entries(args)) {
    if (def.type === "positional") {
      const label = `<${argName}>`;
      positionals.push(def.required === false ? `[${label}]` : label);
      argumentRows.push([label, def.description ?? ""]);
      continue;
    }
    const aliases = "alias" in def && def.alias !== undefined ? [def.alias].flat() : [];
    const hint =
      def.type === "boolean" ? "" : `=<${("valueHint" in def && def.valueHint) || argName}>`;
    const flags = [...aliases.map((a) => `-${a}`), `--${argName}`].join(", ") + hint;
    const required = "required" in def && def.required === true ? " (required)" : "";
    const fallback =
      def.type !== "boolean" && "default" in def && def.default !== undefined
        ? ` [default ${def.default}]`
        : "";
    optionRows.push([flags, `${def.description ?? ""}${fallback}${required}`]);
    if (def.type === "boolean" && "negativeDescription" in def && def.negativeDescription) {
      optionRows.push([`--no-${argName}`, def.negativeDescription]);
    }
  }
  const ownOptions = optionRows.length;
  optionRows.push(["-h, --help", "show this help"]);
  // runScript answers --version for a command that has one (each script's top command).
  if (meta.version) optionRows.push(["-v, --version", "print the version and exit"]);

  const commandRows: Array<[string, string]> = [];
  for (const [subName, sub] of Object.entries(subCommands)) {
    const subMeta = (await resolve((await resolve(sub))?.meta)) as CommandMeta | undefined;
    if (!subMeta?.hidden) commandRows.push([subName, subMeta?.description ?? ""]);
  }

  const usage = [
    name,
    commandRows.length > 0 ? "<command>" : "",
    ...positionals,
    ownOptions > 0 ? "[options]" : "",
  ]
    .filter(Boolean)
    .join(" ");
  const lines = [
    `${name}${meta.version ? ` ${meta.version}` : ""}: ${meta.description ?? ""}`,
    "",
    `${style.heading("Usage:")} ${usage}`,
  ];
  if (argumentRows.length > 0) {
    lines.push("", style.heading("Arguments:"), ...columns(argumentRows, style.flag));
  }
  lines.push("", style.heading("Options:"), ...columns(optionRows, style.flag));
  const environment = meta.environment ?? [];
  if (environment.length > 0) {
    lines.push(
      "",
      style.heading("Environment:"),
      ...columns(
        environment.map((v) => [v.name, v.description]),
        style.flag,
      ),
    );
  }
  if (commandRows.length > 0) {
    lines.push("", style.heading("Commands:"), ...columns(commandRows, style.flag));
    lines.push(
      "",
      `Run \`${name} help <command>\` or \`${name} <command> --help\` for a command's options.`,
    );
  }
  if (meta.notes && meta.notes.length > 0) lines.push("", ...meta.notes);
  return lines.join("\n");
}

/**
 * The command `rawArgs` names, walking down subcommands (`webhooks add --help`,
 * `webhooks help add`), with the names of its parents. An unknown name stops the walk there.
 */
export async function resolveForHelp(
  command: CommandDef,
  rawArgs: readonly string[],
): Promise<{ command: CommandDef; parents: string[]; unknown?: string }> {
  const parents: string[] = [];
  let current = command;
  let rest = rawArgs.filter((arg) => arg !== "--help" && arg !== "-h");
  for (;;) {
    const subCommands = (await resolve(current.subCommands)) ?? {};
    if (Object.keys(subCommands).length === 0) return { command: current, parents };
    const index = rest.findIndex((arg) => !arg.startsWith("-"));
    let subName = index === -1 ? undefined : rest[index];
    if (subName === "help") {
      rest = rest.slice((index ?? 0) + 1);
      const next = rest.findIndex((arg) => !arg.startsWith("-"));
      subName = next === -1 ? undefined : rest[next];
      if (subName === undefined) return { command: current, parents };
    }
    if (subName === undefined) return { command: current, parents };
    const sub = subCommands[subName];
    const meta = (await resolve(current.meta)) as CommandMeta | undefined;
    if (sub === undefined) return { command: current, parents, unknown: subName };
    parents.push(meta?.name ?? "");
    current = (await resolve(sub)) as CommandDef;
    rest = rest.slice(rest.indexOf(subName) + 1);
  }
}

type Resolvable<T> = T | Promise<T> | (() => T) | (() => Promise<T>);

async function resolve<T>(value: Resolvable<T> | undefined): Promise<T | undefined> {
  return typeof value === "function" ? await (value as () => T | Promise<T>)() : await value;
}

function columns(rows: ReadonlyArray<readonly [string, string]>, color: (s: string) => string) {
  const width = Math.min(30, Math.max(...rows.map(([left]) => left.length)));
  return rows.map(([left, right]) => {
    const pad = left.length >= width ? "  " : " ".repeat(width - left.length + 2);
    return `  ${color(left)}${pad}${right}`.trimEnd();
  });
}

function styles(color: boolean) {
  const wrap = (open: string, close: string) => (text: string) =>
    color ? `\u001b[${open}m${text}\u001b[${close}m` : text;
  return { heading: wrap("1", "22"), flag: wrap("36", "39") };
}
