import { defineCommand } from "citty";
import { rejectUnknown } from "../cli/args.ts";
import { helpMeta } from "../cli/help.ts";
import { UsageError } from "../config/errors.ts";
import { shown } from "../webhooks/definition/validate.ts";
import { byIdsSentence, replayByIds } from "../webhooks/delivery/by-ids.ts";
import { readDeliveryFilter } from "../webhooks/delivery/delivery-filter.ts";
import { MAX_REPLAY, replayDeliveries, requeuedSentence } from "../webhooks/delivery/replay.ts";
import type { DeliverySearch } from "../webhooks/model.ts";
import { commonArgs, parseDuration, stringFlag, wholeNumber } from "./args.ts";
import type { CliDeps } from "./context.ts";
import { withStore } from "./context.ts";
import { json } from "./format.ts";
import { findWebhook } from "./webhook-commands.ts";

const args = {
  ids: {
    type: "positional",
    description: "delivery ids: those deliveries only (instead of the filter flags)",
    required: false,
  },
  webhook: { type: "string", description: "webhook id or name", valueHint: "id|name" },
  since: {
    type: "string",
    description: "queued at or after: ISO 8601 (2026-11-27T09:00:00Z) or a time ago (2h, 3d)",
    valueHint: "time",
  },
  until: {
    type: "string",
    description: "queued before: ISO 8601 or a time ago",
    valueHint: "time",
  },
  states: {
    type: "string",
    description: "successful, failed or both, comma-separated [default successful,failed]",
    valueHint: "list",
  },
  event: { type: "string", description: "only this event, e.g. item.updated", valueHint: "name" },
  "object-model": {
    type: "string",
    description: "only changes to this object type",
    valueHint: "model",
  },
  "object-id": {
    type: "string",
    description: "only changes to the object with this id",
    valueHint: "id",
  },
  ...commonArgs,
} as const;

/** A --since/--until value: a duration before `now` (2h) or an ISO 8601 time, as text for the filter. */
function timeFlag(value: string | undefined, now: number): string | undefined {
  if (value === undefined || !/^\s*\d+\s*[smhdw]\s*$/.test(value)) return value;
  return new Date(now - parseDuration(value, "time")).toISOString();
}

/** `webhooks replay 17 18`: those deliveries, each id left as it was said with why. */
async function replayIds(
  deps: CliDeps,
  flags: { _: string[]; json?: boolean } & Record<string, unknown>,
  now: number,
): Promise<void> {
  const filterFlags = Object.keys(args).filter((name) => name !== "ids" && !(name in commonArgs));
  const given = filterFlags.find((name) => flags[name] !== undefined);
  if (given !== undefined) {
    throw new UsageError(`Give delivery ids or filter flags, not both (--${given} given)`);
  }
  const ids = flags._.map((value) =>
    wholeNumber(String(value), "delivery id", 1, Number.MAX_SAFE_INTEGER),
  );
  await withStore(deps, flags, async ({ store, out }) => {
    const done = await replayByIds(store.queue, ids, now);
    const sentence = byIdsSentence(done, "Replayed");
    out(
      flags.json
        ? json({
            replayed: done.count,
            matched: done.matched,
            skipped: done.skipped,
            message: sentence,
          })
        : sentence,
    );
  });
}

/**
 * `webhooks replay`: the same filter as POST /api/deliveries/replay, read by the same rules
 * (lib/webhooks/delivery/delivery-filter.ts); a webhook may be named. At most 100,000, said when cut.
 */
export function replayCommand(deps: CliDeps) {
  return defineCommand({
    meta: helpMeta({
      name: "replay",
      description:
        "Send ended deliveries again, successful ones included (same webhook-id and body)",
      notes: [
        "Give delivery ids (replay 17 18), or at least one of --webhook, --since, --until, --event, --object-model, --object-id.",
        `At most ${MAX_REPLAY.toLocaleString("en")} deliveries, the oldest first; the line says when more matched.`,
        "Each is queued for its next attempt now; a worker sends it (see docs/webhooks.md#replay).",
      ],
    }),
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args, { maxPositionals: MAX_REPLAY });
      const now = (deps.now ?? Date.now)();
      if (flags._.length > 0) {
        await replayIds(deps, flags, now);
        return;
      }
      const given = {
        since: timeFlag(stringFlag(flags.since, "since"), now),
        until: timeFlag(stringFlag(flags.until, "until"), now),
        states: stringFlag(flags.states, "states"),
        event: stringFlag(flags.event, "event"),
        object_model: stringFlag(flags["object-model"], "object-model"),
        object_id: stringFlag(flags["object-id"], "object-id"),
      };
      const read = readDeliveryFilter(given);
      if (!read.ok) {
        const [name = "", problem = ""] = Object.entries(read.problems)[0] ?? [];
        const flag = name.replace("_", "-");
        const value = (flags as Record<string, unknown>)[flag];
        throw new UsageError(`Invalid --${flag} ${shown(String(value))}: ${problem}`);
      }
      const wrong = read.filter.states?.find((s) => s !== "successful" && s !== "failed");
      if (wrong !== undefined) {
        throw new UsageError(
          `Invalid --states ${shown(String(flags.states))}: replay takes successful and failed deliveries`,
        );
      }
      const webhookRef = stringFlag(flags.webhook, "webhook");
      const { states: _, ...narrowing } = read.filter;
      if (webhookRef === undefined && Object.keys(narrowing).length === 0) {
        throw new UsageError(
          "Nothing to replay: give at least one of --webhook, --since, --until, --event, --object-model, --object-id",
        );
      }
      await withStore(deps, flags, async ({ store, out }) => {
        const filter: DeliverySearch = { ...read.filter };
        if (webhookRef !== undefined) filter.webhookId = (await findWebhook(store, webhookRef)).id;
        const done = await replayDeliveries(store.queue, filter, now);
        const sentence = requeuedSentence(done, "Replayed");
        out(
          flags.json
            ? json({
                replayed: done.count,
                matched: done.matched,
                cut: done.cut,
                limit: MAX_REPLAY,
                next_since: done.nextSince === null ? null : new Date(done.nextSince).toISOString(),
                message: sentence,
              })
            : sentence,
        );
      });
    },
  });
}
