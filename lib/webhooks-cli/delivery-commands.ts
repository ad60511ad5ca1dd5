import { defineCommand } from "citty";
import { rejectUnknown } from "../cli/args.ts";
import { UsageError } from "../config/errors.ts";
import { escapeControl } from "../text/control.ts";
import { whyNot } from "../webhooks/delivery/by-ids.ts";
import { retryAllFailed } from "../webhooks/delivery/replay.ts";
import type { ChangeEvent, EventName } from "../webhooks/model.ts";
import { DELIVERY_STATES, ITEM_EVENTS } from "../webhooks/model.ts";
import { statsLines, webhookStats } from "../webhooks/observe/webhook-stats.ts";
import { commonArgs, parseDuration, stringFlag, wholeNumber } from "./args.ts";
import { type CliDeps, withStore } from "./context.ts";
import { json, oneLine, plural, table, time } from "./format.ts";
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

export function retryCommand(deps: CliDeps) {
  const args = {
    ids: {
      type: "positional",
      description: "ids of failed deliveries or of ones waiting for a retry (sent now)",
      required: false,
    },
    "all-failed": {
      type: "boolean",
      description:
        "retry every failed delivery, and send now every one waiting for an automatic retry",
    },
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
          changed = await retryAllFailed(store.queue, now());
        } else {
          // Check them all first: one id that cannot be retried and nothing is queued. One
          // waiting for an automatic retry is sent now, as the admin's Retry does.
          const at = now();
          const states = new Map((await store.queue.idStates(ids)).map((s) => [s.id, s]));
          const refused = ids.flatMap((id) => {
            const reason = whyNot("retry", states.get(id), at);
            return reason === null ? [] : [`${id} (${reason})`];
          });
          if (refused.length > 0) {
            throw new UsageError(
              `Nothing retried: only failed deliveries and those waiting for an automatic retry can be retried; not ${refused.join(", ")}`,
            );
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
  const args = {
    webhook: {
      type: "string",
      description: "this webhook's health instead: attempts by outcome, streak, latency",
      valueHint: "id|name",
    },
    ...commonArgs,
  } as const;
  return defineCommand({
    meta: { name: "stats", description: "Count deliveries per state, or show a webhook's health" },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args);
      const webhookRef = stringFlag(flags.webhook, "webhook");
      await withStore(deps, flags, async ({ store, out, now }) => {
        if (webhookRef !== undefined) {
          const webhook = await findWebhook(store, webhookRef);
          const at = now();
          const health = webhookStats(webhook, await store.queue.attemptTally(webhook.id, at), at);
          out(
            flags.json
              ? json(health)
              : [
                  `Webhook ${webhook.id} "${oneLine(webhook.name)}"`,
                  ...statsLines(health, time),
                ].join("\n"),
          );
          return;
        }
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
