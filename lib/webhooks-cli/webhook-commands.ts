import { type ArgsDef, defineCommand } from "citty";
import { rejectUnknown } from "../cli/args.ts";
import { helpMeta } from "../cli/help.ts";
import { withoutEmpty } from "../config/env.ts";
import { UsageError } from "../config/errors.ts";
import { type AllowList, parseAllowList } from "../http/ssrf.ts";
import { escapeControl } from "../text/control.ts";
import { maskUrlPassword } from "../text/url-credentials.ts";
import type { WebhookFields } from "../webhooks/definition/field-faces.ts";
import { WEBHOOK_FIELDS } from "../webhooks/definition/field-table.ts";
import { rotationPatch } from "../webhooks/definition/rotation.ts";
import { saveWebhook } from "../webhooks/definition/save.ts";
import type { Webhook } from "../webhooks/model.ts";
import { type HealthSummary, healthSummary, percent } from "../webhooks/observe/webhook-stats.ts";
import type { Store } from "../webhooks/ports.ts";
import { urlRefusalWarning } from "../webhooks/sending/url-refusal.ts";
import { commonArgs, stringFlag } from "./args.ts";
import { type CliDeps, withStore } from "./context.ts";
import {
  clearArgs,
  fieldArgs,
  graceSecondsFlag,
  optionNotes,
  readFieldFlags,
  refuseSave,
} from "./field-flags.ts";
import { json, oneLine, safe, table, time, webhookJson } from "./format.ts";

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

function describe(webhook: Webhook, fields: WebhookFields): string {
  const state = webhook.enabled
    ? "enabled"
    : `disabled${webhook.disabledReason ? ` (${oneLine(webhook.disabledReason)})` : ""}`;
  const rate = webhook.maxPerSecond === null ? "" : `, at most ${webhook.maxPerSecond}/s`;
  const options = optionNotes(fields, webhook)
    .map((note) => `, ${note}`)
    .join("");
  return `Webhook ${webhook.id} "${safe(webhook.name)}": ${webhook.method} ${safe(maskUrlPassword(webhook.url))}, events ${webhook.events.join(",")}${rate}${options}, ${state}`;
}

export function addCommand(deps: CliDeps) {
  const fields = deps.webhookFields ?? WEBHOOK_FIELDS;
  const args = { ...fieldArgs(fields, "add"), ...commonArgs } as const satisfies ArgsDef;
  return defineCommand({
    meta: { name: "add", description: "Add a webhook; a secret is generated and shown once" },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args);
      const given = readFieldFlags(fields, { flags, rawArgs, command: "add" }, deps.readFile);
      const allow = workersAllowList(deps);
      await withStore(deps, flags, async ({ store, out, generateSecret }) => {
        const saved = await saveWebhook(store.webhooks, {
          before: null,
          fields: given,
          generateSecret,
        });
        if (!saved.ok) refuseSave(fields, saved.refused);
        const { webhook } = saved;
        const generated = given.secret === undefined ? webhook.secret : null;
        if (flags.json) {
          out(json({ webhook: webhookJson(webhook), secret: generated ?? undefined }));
          return;
        }
        // The secret first: `webhooks add … | head -1` must not lose what is shown only once.
        if (generated) {
          out(`Signing secret (shown only now; receivers verify with it): ${generated}`);
        }
        out(`Added ${describe(webhook, fields)}`);
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

export function listCommand(deps: CliDeps) {
  const fields = deps.webhookFields ?? WEBHOOK_FIELDS;
  const args = { ...commonArgs } as const;
  return defineCommand({
    meta: { name: "list", description: "List webhooks with their health" },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args);
      await withStore(deps, flags, async ({ store, out, now }) => {
        const webhooks = await store.webhooks.list();
        const summaries = await store.queue.attemptSummaries(
          webhooks.map((w) => w.id),
          now(),
        );
        const health = webhooks.map((w) => healthSummary(w, summaries.get(w.id)));
        if (flags.json) {
          out(json(webhooks.map((w, i) => ({ ...webhookJson(w), health: health[i] }))));
          return;
        }
        if (webhooks.length === 0) {
          out("No webhooks. Add one: bun run webhooks add --name NAME --url URL");
          return;
        }
        const [header = "", ...lines] = table(
          ["ID", "NAME", "ENABLED", "HEALTH (24 H)", "EVENTS", "METHOD", "SIGNED", "MAX/S", "URL"],
          webhooks.map((w, i) => [
            String(w.id),
            oneLine(w.name),
            w.enabled ? "yes" : "no",
            healthCell(health[i]),
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
          const notes = optionNotes(fields, w).map((note) => `    ${note}`);
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

/** Its status, with the day's success rate when it had attempts ("failing 40% of 120"). */
function healthCell(health: HealthSummary | undefined): string {
  if (health === undefined) return "-";
  if (health.dayAttempts === 0) return health.status;
  return `${health.status} ${percent(health.daySuccessRate)} of ${health.dayAttempts}`;
}

export function updateCommand(deps: CliDeps) {
  const fields = deps.webhookFields ?? WEBHOOK_FIELDS;
  const args = {
    webhook: { type: "positional", description: "webhook id or name", required: true },
    ...fieldArgs(fields, "update"),
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
    ...clearArgs(fields),
    ...commonArgs,
  } as const satisfies ArgsDef;
  return defineCommand({
    meta: helpMeta({
      name: "update",
      description: "Change a webhook's fields",
      notes: ["Only the fields given change; every other keeps its value."],
    }),
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args, { maxPositionals: 1 });
      const secretChoices = [
        flags.secret !== undefined,
        flags["rotate-secret"],
        flags["remove-secret"],
      ];
      if (secretChoices.filter(Boolean).length > 1) {
        throw new UsageError("Give only one of --secret, --rotate-secret and --remove-secret");
      }
      const patch = readFieldFlags(fields, { flags, rawArgs, command: "update" }, deps.readFile);
      const graceSeconds = graceSecondsFlag(flags);
      if (flags["remove-secret"]) patch.secret = null;
      const allow = workersAllowList(deps);
      await withStore(deps, flags, async ({ store, out, generateSecret, now }) => {
        const webhook = await findWebhook(store, String(flags.webhook));
        if (flags["rotate-secret"]) {
          const secret = generateSecret();
          Object.assign(patch, rotationPatch(webhook, { secret, graceSeconds, now: now() }));
        }
        if (Object.keys(patch).length === 0) {
          throw new UsageError("Nothing to change: give at least one option (see --help)");
        }
        // A URL copied from list or show: its *** stands for the stored password (saveWebhook).
        const saved = await saveWebhook(store.webhooks, { before: webhook, fields: patch });
        if (!saved.ok) refuseSave(fields, saved.refused);
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
        out(`Updated ${describe(updated, fields)}`);
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
            : `${enable ? "Enabled" : "Disabled"} ${describe(updated, deps.webhookFields ?? WEBHOOK_FIELDS)}`,
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
