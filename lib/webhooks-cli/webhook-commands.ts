import { type ArgsDef, defineCommand } from "citty";
import { rejectUnknown } from "../cli/args.ts";
import { helpMeta } from "../cli/help.ts";
import { withoutEmpty } from "../config/env.ts";
import { UsageError } from "../config/errors.ts";
import { type AllowList, parseAllowList } from "../http/ssrf.ts";
import { escapeControl } from "../text/control.ts";
import { maskUrlPassword } from "../text/url-credentials.ts";
import { rotationPatch } from "../webhooks/definition/rotation.ts";
import { saveWebhook } from "../webhooks/definition/save.ts";
import {
  checkContentType,
  checkMaxPerSecond,
  checkMethod,
  checkName,
  checkUrl,
} from "../webhooks/definition/validate.ts";
import type { Webhook, WebhookPatch } from "../webhooks/model.ts";
import type { Store } from "../webhooks/ports.ts";
import { urlRefusalWarning } from "../webhooks/sending/url-refusal.ts";
import { commonArgs, stringFlag } from "./args.ts";
import { type CliDeps, withStore } from "./context.ts";
import { eventsFlag, field, graceSecondsFlag, headerFlags, secretFlag } from "./field-flags.ts";
import { json, oneLine, safe, table, time, webhookJson } from "./format.ts";
import {
  clearOptionArgs,
  optionArgs,
  optionNotes,
  readOptionFlags,
  refuseSave,
} from "./webhook-options.ts";

/** A webhook by id or by name; a one-line UsageError when there is none. */
export async function findWebhook(store: Store, ref: string): Promise<Webhook> {
  const trimmed = ref.trim();
  const byId = /^\d+$/.test(trimmed) ? await store.webhooks.get(Number(trimmed)) : null;
  const webhook = byId ?? (await store.webhooks.getByName(trimmed));
  if (!webhook) {
    throw new UsageError(`No webhook with id or name ${escapeControl(JSON.stringify(ref))}`);
  }
  return webhook;
}

const fieldArgs = {
  url: { type: "string", description: "payload URL (http or https)", valueHint: "url" },
  events: {
    type: "string",
    description:
      "comma list of item.created, item.updated, item.deleted (* for all three), webhook.disabled, delivery.exhausted",
    valueHint: "list",
  },
  method: {
    type: "string",
    description: "POST, PUT, PATCH, DELETE or GET",
    valueHint: "method",
  },
  "content-type": {
    type: "string",
    description: "Content-Type header",
    valueHint: "type",
  },
  header: {
    type: "string",
    description: "extra header 'Name: Value' (repeat for several)",
    valueHint: "'K: V'",
  },
  secret: { type: "string", description: "signing secret whsec_…" },
  "max-per-second": {
    type: "string",
    description: "send at most this many deliveries a second, across all workers (0: no limit)",
    valueHint: "n",
  },
  ...optionArgs,
} as const;

/** What `add` does with a flag left out; `update` leaves that field as it is, so says none. */
const ADD_DEFAULTS: Partial<Record<keyof typeof fieldArgs, string>> = {
  events: "[default *]",
  method: "[default POST]",
  "content-type": "[default application/json]",
  secret: "(generated when left out)",
  "max-per-second": "[default 0]",
  "body-template": "(default: the JSON body)",
  "ssl-verify": "[default on]",
  ordered: "[default off]",
};

/** fieldArgs with what add does when each is left out. */
function addFieldArgs(): typeof fieldArgs {
  const entries = Object.entries(fieldArgs).map(([flag, def]) => {
    const fallback = ADD_DEFAULTS[flag as keyof typeof fieldArgs];
    return [flag, fallback ? { ...def, description: `${def.description} ${fallback}` } : def];
  });
  return Object.fromEntries(entries) as typeof fieldArgs;
}

function describe(webhook: Webhook): string {
  const state = webhook.enabled
    ? "enabled"
    : `disabled${webhook.disabledReason ? ` (${oneLine(webhook.disabledReason)})` : ""}`;
  const rate = webhook.maxPerSecond === null ? "" : `, at most ${webhook.maxPerSecond}/s`;
  const options = optionNotes(webhook)
    .map((note) => `, ${note}`)
    .join("");
  return `Webhook ${webhook.id} "${safe(webhook.name)}": ${webhook.method} ${safe(maskUrlPassword(webhook.url))}, events ${webhook.events.join(",")}${rate}${options}, ${state}`;
}

export function addCommand(deps: CliDeps) {
  const args = {
    name: { type: "string", description: "unique name", required: true },
    ...addFieldArgs(),
    url: { ...fieldArgs.url, required: true },
    disabled: { type: "boolean", description: "create it disabled" },
    ...commonArgs,
  } as const;
  return defineCommand({
    meta: { name: "add", description: "Add a webhook; a secret is generated and shown once" },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args);
      const name = field("name", flags.name, checkName);
      const url = field("url", stringFlag(flags.url, "url") ?? missing("--url"), checkUrl);
      const method = field("method", stringFlag(flags.method, "method") ?? "POST", checkMethod);
      const contentType = field(
        "content-type",
        stringFlag(flags["content-type"], "content-type") ?? "application/json",
        checkContentType,
      );
      const events = eventsFlag(stringFlag(flags.events, "events") ?? "*");
      const headers = headerFlags(rawArgs);
      const given = stringFlag(flags.secret, "secret");
      const secretArg = given === undefined ? undefined : secretFlag(given);
      const rate = stringFlag(flags["max-per-second"], "max-per-second");
      const maxPerSecond =
        rate === undefined ? null : field("max-per-second", rate, checkMaxPerSecond);
      const options = readOptionFlags(flags, deps.readFile);
      const allow = workersAllowList(deps);
      await withStore(deps, flags, async ({ store, out, generateSecret }) => {
        const fields = {
          name,
          url,
          method,
          contentType,
          headers,
          events,
          maxPerSecond,
          ...options,
        };
        const saved = await saveWebhook(store.webhooks, {
          before: null,
          fields: { ...fields, secret: secretArg, enabled: flags.disabled !== true },
          generateSecret,
        });
        if (!saved.ok) refuseSave(saved.refused);
        const { webhook } = saved;
        const secret = webhook.secret;
        if (flags.json) {
          out(json({ webhook: webhookJson(webhook), secret: secretArg ? undefined : secret }));
          return;
        }
        // The secret first: `webhooks add … | head -1` must not lose what is shown only once.
        if (!secretArg) {
          out(`Signing secret (shown only now; receivers verify with it): ${secret}`);
        }
        out(`Added ${describe(webhook)}`);
        await warnIfRefused(deps, webhook.url, allow);
      });
    },
  });
}

/** WEBHOOK_ALLOWED_HOSTS as this command sees it: what a worker with the same setting allows. */
function workersAllowList(deps: CliDeps): AllowList {
  return parseAllowList(withoutEmpty(deps.env).WEBHOOK_ALLOWED_HOSTS);
}

/**
 * One line on stderr when workers will refuse the URL just saved: it is saved all the same
 * (exit 0), but every attempt would be refused until WEBHOOK_ALLOWED_HOSTS allows it.
 */
async function warnIfRefused(deps: CliDeps, url: string, allow: AllowList): Promise<void> {
  const warning = await urlRefusalWarning(url, { allow });
  if (warning !== null) (deps.err ?? deps.out)(`warning: ${warning}`);
}

function missing(flag: string): never {
  throw new UsageError(`${flag} is required`);
}

export function listCommand(deps: CliDeps) {
  const args = { ...commonArgs } as const;
  return defineCommand({
    meta: { name: "list", description: "List webhooks" },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args);
      await withStore(deps, flags, async ({ store, out }) => {
        const webhooks = await store.webhooks.list();
        if (flags.json) {
          out(json(webhooks.map(webhookJson)));
          return;
        }
        if (webhooks.length === 0) {
          out("No webhooks. Add one: bun run webhooks add --name NAME --url URL");
          return;
        }
        const [header = "", ...lines] = table(
          ["ID", "NAME", "ENABLED", "EVENTS", "METHOD", "SIGNED", "MAX/S", "URL"],
          webhooks.map((w) => [
            String(w.id),
            oneLine(w.name),
            w.enabled ? "yes" : "no",
            w.events.join(","),
            w.method,
            w.secret ? "yes" : "no",
            w.maxPerSecond === null ? "-" : String(w.maxPerSecond),
            oneLine(maskUrlPassword(w.url)),
          ]),
        ).split("\n");
        // Why a webhook is off (by hand or automatically), or that it is failing, under its row.
        const withHealth = lines.flatMap((line, i) => {
          const w = webhooks[i];
          if (!w) return [line];
          const notes = optionNotes(w).map((note) => `    ${note}`);
          if (!w.enabled) {
            const why = w.disabledReason ? `: ${oneLine(w.disabledReason)}` : "";
            return [line, `    disabled ${time(w.disabledAt)}${why}`, ...notes];
          }
          if (w.failingSince != null) {
            return [line, `    every attempt failed since ${time(w.failingSince)}`, ...notes];
          }
          return [line, ...notes];
        });
        out([header, ...withHealth].join("\n"));
      });
    },
  });
}

export function updateCommand(deps: CliDeps) {
  const args = {
    webhook: { type: "positional", description: "webhook id or name", required: true },
    name: { type: "string", description: "new name" },
    ...fieldArgs,
    "clear-headers": { type: "boolean", description: "remove every extra header" },
    "rotate-secret": {
      type: "boolean",
      description: "generate a new secret (shown once); the old one signs too for a grace period",
    },
    "grace-seconds": {
      type: "string",
      description: "with --rotate-secret: how long the old secret signs too (0: none; 86400)",
      valueHint: "s",
    },
    "remove-secret": { type: "boolean", description: "send unsigned requests" },
    ...clearOptionArgs,
    ...commonArgs,
  } as const;
  return defineCommand({
    meta: helpMeta({
      name: "update",
      description: "Change a webhook's fields",
      notes: ["Only the fields given change; every other keeps its value."],
    }),
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args, { maxPositionals: 1 });
      const patch: WebhookPatch = {};
      const name = stringFlag(flags.name, "name");
      if (name !== undefined) patch.name = field("name", name, checkName);
      const url = stringFlag(flags.url, "url");
      if (url !== undefined) patch.url = field("url", url, checkUrl);
      const method = stringFlag(flags.method, "method");
      if (method !== undefined) patch.method = field("method", method, checkMethod);
      const contentType = stringFlag(flags["content-type"], "content-type");
      if (contentType !== undefined) {
        patch.contentType = field("content-type", contentType, checkContentType);
      }
      const events = stringFlag(flags.events, "events");
      if (events !== undefined) patch.events = eventsFlag(events);
      const headers = headerFlags(rawArgs);
      if (flags["clear-headers"] && headers.length > 0) {
        throw new UsageError("Give either --clear-headers or --header, not both");
      }
      if (headers.length > 0 || flags["clear-headers"]) patch.headers = headers;
      const secretChoices = [
        flags.secret !== undefined,
        flags["rotate-secret"],
        flags["remove-secret"],
      ];
      if (secretChoices.filter(Boolean).length > 1) {
        throw new UsageError("Give only one of --secret, --rotate-secret and --remove-secret");
      }
      const secret = stringFlag(flags.secret, "secret");
      if (secret !== undefined) patch.secret = secretFlag(secret);
      const graceSeconds = graceSecondsFlag(flags);
      if (flags["remove-secret"]) patch.secret = null;
      const rate = stringFlag(flags["max-per-second"], "max-per-second");
      if (rate !== undefined) patch.maxPerSecond = field("max-per-second", rate, checkMaxPerSecond);
      Object.assign(patch, readOptionFlags(flags, deps.readFile));
      const allow = workersAllowList(deps);
      await withStore(deps, flags, async ({ store, out, generateSecret, now }) => {
        const webhook = await findWebhook(store, flags.webhook);
        if (flags["rotate-secret"]) {
          const secret = generateSecret();
          Object.assign(patch, rotationPatch(webhook, { secret, graceSeconds, now: now() }));
        }
        if (Object.keys(patch).length === 0) {
          throw new UsageError("Nothing to change: give at least one option (see --help)");
        }
        // A URL copied from list or show: its *** stands for the stored password (saveWebhook).
        const saved = await saveWebhook(store.webhooks, { before: webhook, fields: patch });
        if (!saved.ok) refuseSave(saved.refused);
        const updated = saved.webhook;
        const shownSecret = flags["rotate-secret"] ? patch.secret : undefined;
        if (flags.json) {
          out(json({ webhook: webhookJson(updated), secret: shownSecret ?? undefined }));
          return;
        }
        // The secret first, as in add: `| head -1` must not lose it.
        if (shownSecret) out(`New signing secret (shown only now): ${shownSecret}`);
        if (shownSecret && updated.previousSecretUntil !== null) {
          out(`The previous secret signs too until ${time(updated.previousSecretUntil)}`);
        }
        out(`Updated ${describe(updated)}`);
        if (patch.url !== undefined) await warnIfRefused(deps, updated.url, allow);
      });
    },
  });
}

function toggleCommand(deps: CliDeps, enable: boolean) {
  const base = {
    webhook: { type: "positional", description: "webhook id or name", required: true },
    ...commonArgs,
  } as const;
  const args: ArgsDef = enable
    ? base
    : { ...base, reason: { type: "string", description: "why, shown in listings" } };
  return defineCommand({
    meta: {
      name: enable ? "enable" : "disable",
      description: enable
        ? "Enable a webhook (its waiting deliveries are sent again)"
        : "Disable a webhook (nothing is queued or sent for it meanwhile)",
    },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args, { maxPositionals: 1 });
      const reason = enable ? undefined : stringFlag(flags.reason, "reason");
      await withStore(deps, flags, async ({ store, out }) => {
        const webhook = await findWebhook(store, String(flags.webhook));
        const updated = await store.webhooks.update(webhook.id, {
          enabled: enable,
          ...(enable ? {} : { disabledReason: reason ?? "disabled by hand" }),
        });
        out(
          flags.json
            ? json(webhookJson(updated))
            : `${enable ? "Enabled" : "Disabled"} ${describe(updated)}`,
        );
      });
    },
  });
}

export function enableCommand(deps: CliDeps) {
  return toggleCommand(deps, true);
}

export function disableCommand(deps: CliDeps) {
  return toggleCommand(deps, false);
}

export function removeCommand(deps: CliDeps) {
  const args = {
    webhook: { type: "positional", description: "webhook id or name", required: true },
    ...commonArgs,
  } as const;
  return defineCommand({
    meta: { name: "remove", description: "Remove a webhook and its delivery history" },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args, { maxPositionals: 1 });
      await withStore(deps, flags, async ({ store, out }) => {
        const webhook = await findWebhook(store, flags.webhook);
        await store.webhooks.remove(webhook.id);
        out(
          flags.json
            ? json({ removed: webhook.id })
            : `Removed webhook ${webhook.id} "${safe(webhook.name)}" and its deliveries`,
        );
      });
    },
  });
}
