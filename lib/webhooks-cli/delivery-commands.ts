import { defineCommand } from "citty";
import { rejectUnknown } from "../cli/args.ts";
import { UsageError } from "../config/errors.ts";
import { loadFields } from "../config/fields.ts";
import { escapeControl } from "../text/control.ts";
import { orderedFailureNote } from "../webhooks/delivery/ordered-note.ts";
import { attemptLimits, retryingText } from "../webhooks/delivery/retrying.ts";
import type {
  Attempt,
  ChangeEvent,
  Delivery,
  DeliveryFilter,
  DeliveryState,
  EventName,
} from "../webhooks/model.ts";
import { DELIVERY_STATES, ITEM_EVENTS } from "../webhooks/model.ts";
import { awaitsRetry } from "../webhooks/policy/retry.ts";
import { WORKER_FIELDS } from "../worker/config.ts";
import { commonArgs, parseDuration, stringFlag, wholeNumber } from "./args.ts";
import { type CliDeps, withStore } from "./context.ts";
import {
  attemptLine,
  deliveryJson,
  json,
  maskedText,
  maskedUrl,
  oneLine,
  plural,
  safe,
  table,
  time,
} from "./format.ts";
import { findWebhook } from "./webhook-commands.ts";

const EMIT_EVENTS: readonly string[] = [...ITEM_EVENTS, "ping"];

/** The change a detected item event would carry, with `data` as the item. */
export function changeFor(
  event: EventName,
  data: Record<string, unknown>,
  options: { username: string; now: number },
): ChangeEvent {
  return {
    event,
    model: event === "ping" ? "webhook" : "item",
    username: options.username,
    requestId: crypto.randomUUID(),
    data,
    prechange: event === "item.deleted" ? data : null,
    postchange: event === "item.deleted" || event === "ping" ? null : data,
    timestamp: new Date(options.now),
  };
}

function parseData(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `Invalid --data: not JSON (${escapeControl((error as Error).message)}); expected an object such as '{"id": 1, "name": "Widget"}'`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UsageError(`Invalid --data: expected a JSON object such as '{"id": 1}'`);
  }
  return value as Record<string, unknown>;
}

export function emitCommand(deps: CliDeps) {
  const args = {
    event: {
      type: "positional",
      description: `${ITEM_EVENTS.join(", ")}, or ping (with --webhook)`,
      required: true,
    },
    data: { type: "string", description: "the item as a JSON object", valueHint: "json" },
    count: { type: "string", description: "how many changes to emit (default 1)", valueHint: "n" },
    webhook: { type: "string", description: "only this webhook (id or name)", valueHint: "id" },
    username: { type: "string", description: "username in the payload (default cli)" },
    ...commonArgs,
  } as const;
  return defineCommand({
    meta: {
      name: "emit",
      description: "Queue deliveries as a detected change would (one per matching webhook)",
    },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args, { maxPositionals: 1 });
      const event = flags.event.trim();
      if (!EMIT_EVENTS.includes(event)) {
        throw new UsageError(
          `Unknown event ${escapeControl(JSON.stringify(flags.event))}: expected one of ${EMIT_EVENTS.join(", ")}`,
        );
      }
      const webhookRef = stringFlag(flags.webhook, "webhook");
      if (event === "ping" && webhookRef === undefined) {
        throw new UsageError("ping goes to one webhook: add --webhook ID");
      }
      const data = parseData(stringFlag(flags.data, "data"));
      const countText = stringFlag(flags.count, "count");
      const count = countText === undefined ? 1 : wholeNumber(countText, "--count", 1, 1_000_000);
      const username = stringFlag(flags.username, "username") ?? "cli";
      await withStore(deps, flags, async ({ store, out, now }) => {
        const webhookId =
          webhookRef === undefined ? undefined : (await findWebhook(store, webhookRef)).id;
        // One transaction: all of the changes are queued, or (on any error) none; in batches
        // of 1000 changes, each as few statements as the store can.
        const ids = await store.transaction(async (tx) => {
          const all: number[] = [];
          for (let done = 0; done < count; ) {
            const batch = Array.from({ length: Math.min(1000, count - done) }, () =>
              changeFor(event as EventName, data, { username, now: now() }),
            );
            done += batch.length;
            all.push(...(await tx.queue.enqueueMany(batch, { webhookId })));
          }
          return all;
        });
        if (flags.json) {
          out(json({ event, changes: count, deliveries: ids }));
          return;
        }
        const listed = ids.length > 0 && ids.length <= 20 ? `: ${ids.join(", ")}` : "";
        const hint =
          ids.length === 0
            ? webhookId === undefined
              ? " (no enabled webhook is subscribed to it, or no conditions matched)"
              : " (the webhook is disabled or not subscribed to it)"
            : "";
        out(
          `Queued ${plural(ids.length, "delivery", "deliveries")} for ${plural(count, `${event} change`)}${listed}${hint}`,
        );
      });
    },
  });
}

function checkState(value: string | undefined): DeliveryState | undefined {
  if (value === undefined) return undefined;
  if (!(DELIVERY_STATES as readonly string[]).includes(value)) {
    throw new UsageError(
      `Unknown state ${escapeControl(JSON.stringify(value))}: expected one of ${DELIVERY_STATES.join(", ")}`,
    );
  }
  return value as DeliveryState;
}

export function deliveriesCommand(deps: CliDeps) {
  const args = {
    state: { type: "string", description: DELIVERY_STATES.join(", "), valueHint: "state" },
    webhook: { type: "string", description: "webhook id or name", valueHint: "id" },
    limit: { type: "string", description: "how many, newest first (default 20)", valueHint: "n" },
    ...commonArgs,
  } as const;
  return defineCommand({
    meta: { name: "deliveries", description: "List deliveries, newest first, with their attempts" },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args);
      const state = checkState(stringFlag(flags.state, "state"));
      const limitText = stringFlag(flags.limit, "limit");
      const limit = limitText === undefined ? 20 : wholeNumber(limitText, "--limit", 1, 1000);
      const webhookRef = stringFlag(flags.webhook, "webhook");
      await withStore(deps, flags, async ({ store, out, now }) => {
        // Failed, as in the admin: also those waiting for an automatic retry, with when.
        const filter: DeliveryFilter =
          state === "failed" ? { failing: true, limit } : { state, limit };
        if (webhookRef !== undefined) filter.webhookId = (await findWebhook(store, webhookRef)).id;
        const limits = attemptLimits(await store.webhooks.list(), maxAttemptsOf(deps));
        const nowMs = now();
        const deliveries = await store.queue.list(filter);
        const shown: Array<{ delivery: Delivery; attempts: Attempt[] }> = [];
        for (const delivery of deliveries) {
          shown.push({ delivery, attempts: (await store.queue.get(delivery.id))?.attempts ?? [] });
        }
        if (flags.json) {
          out(json(shown.map(({ delivery, attempts }) => deliveryJson(delivery, attempts))));
          return;
        }
        if (shown.length === 0) {
          out("No deliveries.");
          return;
        }
        const rows = shown.map(({ delivery: d }) => [
          String(d.id),
          d.state,
          oneLine(d.webhookName),
          d.event,
          String(d.attempts),
          awaitsRetry(d)
            ? retryingText(d, limits.get(d.webhookId), nowMs)
            : d.state === "queued"
              ? `next ${time(d.nextAttemptAt)}`
              : d.state === "delivering"
                ? `lease until ${time(d.leaseExpiresAt)}`
                : `done ${time(d.completedAt)}`,
        ]);
        const [header = "", ...lines] = table(
          ["ID", "STATE", "WEBHOOK", "EVENT", "ATTEMPTS", "WHEN"],
          rows,
        ).split("\n");
        const withAttempts = lines.flatMap((line, i) => [
          line,
          ...(shown[i]?.attempts ?? []).map((a) => `    ${attemptLine(a)}`),
        ]);
        out([header, ...withAttempts].join("\n"));
      });
    },
  });
}

export function showCommand(deps: CliDeps) {
  const args = {
    delivery: { type: "positional", description: "delivery id", required: true },
    ...commonArgs,
  } as const;
  return defineCommand({
    meta: { name: "show", description: "Show one delivery: payload and every attempt" },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args, { maxPositionals: 1 });
      const id = wholeNumber(flags.delivery, "delivery id", 1, Number.MAX_SAFE_INTEGER);
      await withStore(deps, flags, async ({ store, out }) => {
        const found = await store.queue.get(id);
        if (!found) throw new UsageError(`No delivery with id ${id}`);
        const { delivery: d, attempts } = found;
        if (flags.json) {
          out(json(deliveryJson(d, attempts)));
          return;
        }
        const lines = [
          `Delivery ${d.id}: ${d.state}, ${plural(d.attempts, "attempt")}`,
          `  webhook     ${d.webhookId} "${oneLine(d.webhookName)}"`,
          `  event       ${d.event}`,
          `  webhook-id  ${d.messageId}`,
          `  created     ${time(d.createdAt)}`,
        ];
        if (d.state === "queued") lines.push(`  next        ${time(d.nextAttemptAt)}`);
        if (d.state === "delivering") {
          lines.push(`  leased by   ${oneLine(d.leaseOwner)} until ${time(d.leaseExpiresAt)}`);
        }
        if (d.completedAt !== null) lines.push(`  completed   ${time(d.completedAt)}`);
        if (d.lastError) lines.push(`  last error  ${oneLine(maskedText(d.lastError))}`);
        // Rendered from the webhook's templates when this delivery was queued.
        if (d.url !== null) lines.push(`  url         ${oneLine(maskedUrl(d.url))}`);
        for (const [name, value] of d.headers ?? []) {
          lines.push(`  header      ${oneLine(name)}: ${oneLine(value)}`);
        }
        if (d.templateFailed) {
          lines.push(
            "  (its template failed: nothing is sent; fix the template, then retry renders it again)",
          );
        }
        const ordered = await orderedFailureNote(store.queue, d);
        if (ordered !== null) lines.push(`  (${oneLine(ordered)})`);
        if (!d.templateFailed) lines.push("", "Payload:", indent(safe(pretty(d.payload)), "  "));
        if (d.context !== null) {
          lines.push("", "Template context:", indent(safe(pretty(d.context)), "  "));
        }
        lines.push("", "Attempts:");
        if (attempts.length === 0) lines.push("  (none yet)");
        for (const a of attempts) {
          lines.push(`  ${attemptLine(a)}`);
          if (a.responseHeaders) lines.push(indent(safe(a.responseHeaders), "      "));
          if (a.responseBody) lines.push("", indent(safe(a.responseBody), "      "));
        }
        out(lines.join("\n"));
      });
    },
  });
}

function pretty(payload: string): string {
  try {
    return JSON.stringify(JSON.parse(payload), null, 2);
  } catch {
    return payload;
  }
}

function indent(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((line) => `${prefix}${line}`)
    .join("\n");
}

export function retryCommand(deps: CliDeps) {
  const args = {
    ids: {
      type: "positional",
      description: "ids of failed deliveries or of ones waiting for a retry (sent now)",
      required: false,
    },
    "all-failed": { type: "boolean", description: "retry every failed delivery" },
    ...commonArgs,
  } as const;
  return defineCommand({
    meta: { name: "retry", description: "Queue failed deliveries again (their history is kept)" },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args, { maxPositionals: 10_000 });
      const all = flags["all-failed"] === true;
      const ids = flags._.map((value) =>
        wholeNumber(String(value), "delivery id", 1, Number.MAX_SAFE_INTEGER),
      );
      if (all === ids.length > 0) {
        throw new UsageError("Give delivery ids or --all-failed (one of the two)");
      }
      await withStore(deps, flags, async ({ store, out, now }) => {
        let changed: number;
        if (all) {
          changed = await store.queue.retryAllFailed(now());
        } else {
          // Check them all first: one bad id and nothing is queued.
          for (const id of ids) {
            const found = await store.queue.get(id);
            if (!found) throw new UsageError(`No delivery with id ${id}`);
            // One waiting for an automatic retry is sent now, as the admin's Retry does.
            if (found.delivery.state !== "failed" && !awaitsRetry(found.delivery)) {
              throw new UsageError(
                `Delivery ${id} is ${found.delivery.state}: only failed deliveries and those waiting for an automatic retry can be retried`,
              );
            }
          }
          changed = await store.transaction((tx) => tx.queue.retry(ids, now()));
        }
        out(
          flags.json
            ? json({ retried: changed })
            : `Queued ${plural(changed, "delivery", "deliveries")} again`,
        );
      });
    },
  });
}

export function statsCommand(deps: CliDeps) {
  const args = { ...commonArgs } as const;
  return defineCommand({
    meta: { name: "stats", description: "Count deliveries per state" },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args);
      await withStore(deps, flags, async ({ store, out }) => {
        const stats = await store.queue.stats();
        if (flags.json) {
          out(JSON.stringify(stats));
          return;
        }
        out(
          table(
            ["STATE", "COUNT"],
            DELIVERY_STATES.map((s) => [s, String(stats[s])]),
          ),
        );
      });
    },
  });
}

export function purgeCommand(deps: CliDeps) {
  const args = {
    "older-than": {
      type: "string",
      description: "age of completed deliveries to delete, e.g. 30d, 12h",
      required: true,
      valueHint: "age",
    },
    ...commonArgs,
  } as const;
  return defineCommand({
    meta: {
      name: "purge",
      description: "Delete successful and failed deliveries completed longer ago than --older-than",
    },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args);
      const age = parseDuration(flags["older-than"], "--older-than");
      await withStore(deps, flags, async ({ store, out, now }) => {
        const before = now() - age;
        const purged = await store.queue.purge(before);
        out(
          flags.json
            ? json({ purged, completedBefore: before })
            : `Purged ${plural(purged, "delivery", "deliveries")} completed before ${time(before)}`,
        );
      });
    },
  });
}

/**
 * WEBHOOK_MAX_ATTEMPTS as the workers read it, for "attempt 3 of 8"; null when unset (each
 * webhook's schedule says). A bad value is the workers' own one-line error, exit 2.
 */
function maxAttemptsOf(deps: CliDeps): number | null {
  const fields = WORKER_FIELDS.filter((field) => field.key === "maxAttempts");
  const loaded = loadFields(fields, deps.env);
  return loaded.given.has("maxAttempts") ? (loaded.values.maxAttempts as number) : null;
}
