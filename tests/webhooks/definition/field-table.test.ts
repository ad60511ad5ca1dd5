import { describe, expect, test } from "bun:test";
import type { ArgsDef } from "citty";
import { emptyWebhookForm } from "../../../lib/app/admin/webhooks/webhook-form.ts";
import { WEBHOOK_FIELDS } from "../../../lib/webhooks/definition/field-table.ts";
import { addCommand, updateCommand } from "../../../lib/webhooks-cli/webhook-commands.ts";

/**
 * One set of webhook fields, three front ends: the API reads the table itself; the CLI's flags
 * and the admin form's fields must name the same fields, so a field added to one and not the
 * others fails here.
 */

/** The CLI's flag for a table field, where it is not the JSON name with - for _. */
const FLAG_EXCEPTIONS: Record<string, string> = {
  headers: "header", // repeatable, one 'Name: Value' each
  enabled: "disabled", // add --disabled; enable/disable are commands of their own
};
/** Flags of add/update that are not fields: output, database, ways of clearing or making one. */
const NOT_FIELDS = new Set([
  "json",
  "database-url",
  "webhook",
  "clear-headers",
  "clear-body-template",
  "clear-condition",
  "rotate-secret",
  "remove-secret",
  "grace-seconds",
]);
/** Form fields that are not stored values. */
const FORM_ONLY = new Set(["removeSecret"]);

const deps = { env: {}, out() {} };
const cliFlags = (command: { args?: unknown }) =>
  Object.keys((command.args ?? {}) as ArgsDef).filter((flag) => !NOT_FIELDS.has(flag));
const tableFlags = WEBHOOK_FIELDS.map(
  (f) => FLAG_EXCEPTIONS[f.name] ?? f.name.replaceAll("_", "-"),
);

describe("the webhook field table", () => {
  test("has one entry per name and per stored value", () => {
    expect(new Set(WEBHOOK_FIELDS.map((f) => f.name)).size).toBe(WEBHOOK_FIELDS.length);
    expect(new Set(WEBHOOK_FIELDS.map((f) => f.key)).size).toBe(WEBHOOK_FIELDS.length);
  });

  test("names the same fields as `webhooks add` flags", () => {
    expect(cliFlags(addCommand(deps)).sort()).toEqual([...tableFlags].sort());
  });

  test("names the same fields as `webhooks update` flags (enabled is enable/disable there)", () => {
    const expected = tableFlags.filter((flag) => flag !== "disabled");
    expect(cliFlags(updateCommand(deps)).sort()).toEqual(expected.sort());
  });

  test("names the same fields as the admin form", () => {
    const formKeys = Object.keys(emptyWebhookForm()).filter((key) => !FORM_ONLY.has(key));
    expect(formKeys.sort()).toEqual(WEBHOOK_FIELDS.map((f) => f.key as string).sort());
  });
});
