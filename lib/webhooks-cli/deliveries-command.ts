import { defineCommand } from "citty";
import { rejectUnknown } from "../cli/args.ts";
import { UsageError } from "../config/errors.ts";
import { loadFields } from "../config/fields.ts";
import { escapeControl } from "../text/control.ts";
import { orderedFailureNote } from "../webhooks/delivery/ordered-note.ts";
import { attemptLimits, retryingText } from "../webhooks/delivery/retrying.ts";
import type { Attempt, Delivery, DeliveryFilter, DeliveryState } from "../webhooks/model.ts";
import { DELIVERY_STATES } from "../webhooks/model.ts";
import { awaitsRetry } from "../webhooks/policy/retry.ts";
import type { DeliveryQueue } from "../webhooks/ports.ts";
import { WORKER_FIELDS } from "../worker/config.ts";
import { commonArgs, stringFlag, wholeNumber } from "./args.ts";
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
    "message-id": {
      type: "string",
      description: "the webhook-id header a receiver logged (msg_…)",
      valueHint: "id",
    },
    "object-model": {
      type: "string",
      description: "changes to this object type (default item with --object-id)",
      valueHint: "model",
    },
    "object-id": {
      type: "string",
      description: "changes to the object with this id",
      valueHint: "id",
    },
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
      const messageId = stringFlag(flags["message-id"], "message-id")?.trim();
      const object = objectFlags(flags["object-model"], flags["object-id"]);
      await withStore(deps, flags, async ({ store, out, now }) => {
        // Failed, as in the admin: also those waiting for an automatic retry, with when.
        const filter: DeliveryFilter =
          state === "failed" ? { failing: true, limit } : { state, limit };
        if (webhookRef !== undefined) filter.webhookId = (await findWebhook(store, webhookRef)).id;
        if (object !== undefined) filter.object = object;
        const limits = attemptLimits(await store.webhooks.list(), maxAttemptsOf(deps));
        const nowMs = now();
        const deliveries =
          messageId === undefined
            ? await store.queue.list(filter)
            : await byMessageId(store.queue, messageId, filter);
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

/** --object-model and --object-id: an object's deliveries (the model defaults to item). */
function objectFlags(model: unknown, id: unknown): { model: string; id: number } | undefined {
  const modelText = stringFlag(model, "object-model")?.trim();
  const idText = stringFlag(id, "object-id");
  if (idText === undefined) {
    if (modelText !== undefined) throw new UsageError("--object-model goes with --object-id N");
    return undefined;
  }
  const objectId = wholeNumber(idText, "--object-id", 1, Number.MAX_SAFE_INTEGER);
  return { model: modelText || "item", id: objectId };
}

/**
 * The delivery that sent `messageId` (message ids are unique), when it also passes the other
 * flags; the failed listing's rule (failed, or waiting for an automatic retry) included.
 */
async function byMessageId(
  queue: CliQueue,
  messageId: string,
  filter: DeliveryFilter,
): Promise<Delivery[]> {
  const page = await queue.search({ messageId }, { limit: 1, offset: 0 });
  return page.deliveries.filter(
    (d) =>
      (filter.webhookId === undefined || d.webhookId === filter.webhookId) &&
      (filter.object === undefined ||
        (d.objectModel === filter.object.model && d.objectId === filter.object.id)) &&
      (filter.failing
        ? d.state === "failed" || awaitsRetry(d)
        : (filter.state ?? d.state) === d.state),
  );
}

type CliQueue = Pick<DeliveryQueue, "search">;

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

/**
 * WEBHOOK_MAX_ATTEMPTS as the workers read it, for "attempt 3 of 8"; null when unset (each
 * webhook's schedule says). A bad value is the workers' own one-line error, exit 2.
 */
function maxAttemptsOf(deps: CliDeps): number | null {
  const fields = WORKER_FIELDS.filter((field) => field.key === "maxAttempts");
  const loaded = loadFields(fields, deps.env);
  return loaded.given.has("maxAttempts") ? (loaded.values.maxAttempts as number) : null;
}
