import { type CommandDef, defineCommand } from "citty";
import { rejectUnknown } from "../../cli/args.ts";
import { helpMeta } from "../../cli/help.ts";
import { withoutEmpty } from "../../config/env.ts";
import { UsageError } from "../../config/errors.ts";
import { escapeControl } from "../../text/control.ts";
import { VERSION } from "../../version.ts";
import { type ApiToken, DuplicateTokenNameError } from "../../webhooks/ports.ts";
import { commonArgs, stringFlag, wholeNumber } from "../../webhooks-cli/args.ts";
import { type CliDeps, withStore } from "../../webhooks-cli/context.ts";
import { json, table, time } from "../../webhooks-cli/format.ts";
import { OPEN_APP_TOKEN_NOTE } from "./access-mode.ts";
import { generateApiToken, hashApiToken, tokenNameProblem } from "./api-tokens.ts";

const DAY_MS = 86_400_000;
const MAX_EXPIRES_DAYS = 3650;

/** `bun run app tokens …`: API tokens for programs that should not hold ADMIN_TOKEN. */
export function createTokensCommand(
  options: Omit<CliDeps, "out"> & Partial<Pick<CliDeps, "out">>,
): CommandDef {
  const deps: CliDeps = {
    ...options,
    out: options.out ?? ((text) => process.stdout.write(`${text}\n`)),
  };
  return defineCommand({
    meta: helpMeta({
      name: "tokens",
      version: VERSION,
      description:
        "API tokens: a read token may only GET and HEAD, a write token anything ADMIN_TOKEN may (DATABASE_URL names the database)",
      notes: ["Exit codes: 0 done, 1 failed, 2 bad flag, argument, name or variable."],
    }),
    subCommands: {
      add: addTokenCommand(deps),
      list: listTokensCommand(deps),
      revoke: revokeTokenCommand(deps),
    },
  });
}

function addTokenCommand(deps: CliDeps) {
  const args = {
    ...commonArgs,
    name: { type: "string", description: "the token's name (unique)", valueHint: "name" },
    write: { type: "boolean", description: "may change things too (default: read only)" },
    "expires-days": {
      type: "string",
      description: `stops being accepted after N days (1–${MAX_EXPIRES_DAYS}; default: never)`,
      valueHint: "N",
    },
  } as const;
  return defineCommand({
    meta: {
      name: "add",
      description: "Create a token; it is printed once, alone on the last line",
    },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args);
      const name = stringFlag(flags.name, "name");
      if (name === undefined) throw new UsageError("--name is required: tokens add --name NAME");
      const problem = tokenNameProblem(name);
      if (problem !== null) {
        throw new UsageError(`Invalid --name ${escapeControl(JSON.stringify(name))}: ${problem}`);
      }
      const days = flags["expires-days"];
      const expiresDays =
        days === undefined
          ? null
          : wholeNumber(String(days), "--expires-days", 1, MAX_EXPIRES_DAYS);
      await withStore(deps, flags, async ({ store, out, now }) => {
        const token = generateApiToken();
        const expiresAt = expiresDays === null ? null : now() + expiresDays * DAY_MS;
        let created: ApiToken;
        try {
          created = await store.tokens.create({
            name,
            hash: hashApiToken(token),
            write: flags.write === true,
            expiresAt,
          });
        } catch (error) {
          if (error instanceof DuplicateTokenNameError) throw new UsageError(error.message);
          throw error;
        }
        if (flags.json) {
          out(json({ ...created, token }));
          return;
        }
        if (withoutEmpty(deps.env).ADMIN_TOKEN === undefined) out(OPEN_APP_TOKEN_NOTE);
        const access = created.write ? "read and write" : "read only";
        const until = expiresAt === null ? "never expires" : `expires ${time(expiresAt)}`;
        out(
          `Created API token "${name}" (${access}, ${until}). It is shown this once; keep it now:`,
        );
        out(token);
      });
    },
  });
}

function listTokensCommand(deps: CliDeps) {
  const args = { ...commonArgs } as const;
  return defineCommand({
    meta: { name: "list", description: "List tokens: name, access, created, last used, expiry" },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args);
      await withStore(deps, flags, async ({ store, out, now }) => {
        const tokens = await store.tokens.list();
        if (flags.json) {
          out(json(tokens));
          return;
        }
        if (tokens.length === 0) {
          out("No API tokens. Add one: bun run app tokens add --name NAME [--write]");
          return;
        }
        const t = now();
        out(
          table(
            ["NAME", "ACCESS", "CREATED", "LAST USED", "EXPIRES"],
            tokens.map((token) => [
              token.name,
              token.write ? "write" : "read",
              time(token.createdAt),
              time(token.lastUsedAt),
              token.expiresAt === null
                ? "never"
                : `${time(token.expiresAt)}${token.expiresAt <= t ? " (expired)" : ""}`,
            ]),
          ),
        );
      });
    },
  });
}

function revokeTokenCommand(deps: CliDeps) {
  const args = {
    ...commonArgs,
    name: { type: "positional", description: "the token's name", required: false },
  } as const;
  return defineCommand({
    meta: { name: "revoke", description: "Delete a token: it is refused (401) from now on" },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args, { maxPositionals: 1 });
      const name = flags.name;
      if (typeof name !== "string" || name === "") {
        throw new UsageError("Give the token's name: tokens revoke NAME");
      }
      await withStore(deps, flags, async ({ store, out }) => {
        if (!(await store.tokens.revoke(name))) {
          throw new UsageError(`No API token named ${escapeControl(JSON.stringify(name))}`);
        }
        out(flags.json ? json({ revoked: name }) : `Revoked API token "${name}"`);
      });
    },
  });
}
