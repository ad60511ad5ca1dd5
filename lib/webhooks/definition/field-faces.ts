import type { z } from "zod";
import type { NewWebhook, Webhook } from "../model.ts";
import type { Checked } from "./validate.ts";

/**
 * What one webhook field is in each place it shows, as one row of the field table
 * (field-table.ts): its rule (validate.ts), its JSON name and schema (the API, the OpenAPI
 * document), its flag and help (`webhooks add/update`), its form input and label (the admin),
 * the note listings give it, and how a read-only token sees it. Every face reads its values by
 * the same rule, so a field added as a row appears in all of them.
 */

/** A value of the admin form as posted: text, a set of ticked choices, or a checkbox. */
export type FormValue = string | string[] | boolean;

export type FormInput =
  | {
      kind: "text";
      inputmode?: "url" | "numeric" | "decimal";
      required?: boolean;
      maxlength?: number;
    }
  | { kind: "textarea"; rows?: number; code?: boolean }
  | { kind: "select"; options: readonly string[] }
  /** Ticks, one per choice: [value, label]. The field's label is the fieldset's legend. */
  | { kind: "checkboxes"; choices: ReadonlyArray<readonly [string, string]> }
  /** A checkbox; `inverted`: ticked means false, posted as `name` (the unsafe choice is ticked). */
  | { kind: "checkbox"; name?: string; inverted?: boolean }
  /** Write only: shown empty; blank keeps (or, new, generates) it; `removable` offers a removal. */
  | { kind: "password"; removable: string };

export interface FormFace {
  label: string;
  /** Under the label; `text` in backticks is code. Absent: none. */
  hint?: string | ((webhook: Webhook | undefined) => string);
  input: FormInput;
  /** A new webhook's value. */
  initial: FormValue;
  /** The stored value as the form shows it. */
  value(webhook: Webhook): FormValue;
  /** The value as posted, by the field's rule; undefined: not given (a blank secret). */
  read(value: FormValue): Checked<unknown> | undefined;
}

export interface CliFace {
  /** The flag without dashes, e.g. `timeout-ms`. */
  flag: string;
  type: "string" | "boolean";
  description: string;
  valueHint?: string;
  /** What `add` does when the flag is left out, appended to add's help. */
  addDefault?: string;
  /** `add` needs it. */
  required?: boolean;
  /** `update`'s help, where it differs ("new name"). */
  updateDescription?: string;
  /** Only `add` has it (enabled: `update` leaves that to enable/disable). */
  addOnly?: boolean;
  /** A boolean flag that means false when given (`--disabled`). */
  inverted?: boolean;
  /** Never quoted back in an error (secrets, long texts). */
  hidden?: boolean;
  /** The value may be `@FILE`: read from that file. */
  file?: boolean;
  /** Given many times, each by `each`, all together by `all` (--header). */
  repeat?: {
    each(text: string): Checked<unknown>;
    all(values: unknown[]): Checked<unknown>;
  };
  /** `update`'s flag setting the field to null (`clear-body-template`), and its help. */
  clear?: { flag: string; description: string };
  /** A string flag's text by the field's rule. */
  read(text: string): Checked<unknown>;
}

/** Short notes of listings: the admin's list (`short`) and `webhooks list` (`long`); null: none. */
export interface NoteFace {
  short(webhook: Webhook): string | null;
  long(webhook: Webhook): string | null;
}

export interface WebhookField {
  /** The JSON name: the CLI flag with `_` for `-` (`content_type`, `timeout_ms`). */
  name: string;
  /** The stored value's key (Webhook, NewWebhook), which the admin form's inputs use too. */
  key: keyof NewWebhook;
  /** The given JSON value as a patch of the stored webhook, or the problem. */
  read(value: unknown): Checked<Partial<NewWebhook>>;
  /** The stored value as JSON; undefined for a field never shown (the secret). */
  show(webhook: Webhook): unknown;
  /**
   * The value as a read-only API token sees it, for a field that can hold credentials: those
   * masked as ***. Absent: `show`'s. Write tokens and sessions always get `show`'s.
   */
  masked?(webhook: Webhook): unknown;
  /** The JSON value as given and as shown, for the OpenAPI document. */
  schema: z.ZodType;
  cli: CliFace | null;
  form: FormFace | null;
  note?: NoteFace;
}

/** A table of fields: WEBHOOK_FIELDS, or a test's own. */
export type WebhookFields = readonly WebhookField[];

function refused(problem: string): { ok: false; problem: string } {
  return { ok: false, problem };
}

/** What a row is written as: one rule, and how each face's value becomes the rule's input. */
export interface FieldSpec<K extends keyof NewWebhook, V> {
  name: string;
  key: K;
  schema: z.ZodType;
  /** A JSON value in the rule's terms; undefined: not of the expected shape. */
  toRule: (value: unknown) => V | undefined;
  /** The shape, for a JSON value that has not it: "must be <expected>". */
  expected: string;
  rule: (value: V) => Checked<NewWebhook[K]>;
  show: (webhook: Webhook) => unknown;
  masked?: (webhook: Webhook) => unknown;
  cli: (Omit<CliFace, "read"> & { toRule?: (text: string) => V }) | null;
  form:
    | (Omit<FormFace, "read"> & {
        toRule?: (value: FormValue) => V;
        /** A rule of the form's own for this field (header lines named by line). */
        rule?: (value: FormValue) => Checked<NewWebhook[K]>;
      })
    | null;
  note?: NoteFace;
}

/** A row of the table from its spec: the rule read through each face. */
export function field<K extends keyof NewWebhook, V>(spec: FieldSpec<K, V>): WebhookField {
  const { cli, form } = spec;
  return {
    name: spec.name,
    key: spec.key,
    schema: spec.schema,
    show: spec.show,
    ...(spec.masked ? { masked: spec.masked } : {}),
    ...(spec.note ? { note: spec.note } : {}),
    read(value) {
      const given = spec.toRule(value);
      if (given === undefined) return refused(`must be ${spec.expected}`);
      const checked = spec.rule(given);
      return checked.ok ? { ok: true, value: { [spec.key]: checked.value } } : checked;
    },
    cli: cli && {
      ...cli,
      read: (text) => spec.rule(cli.toRule ? cli.toRule(text) : (text as V)),
    },
    form: form && {
      ...form,
      read: (value) => {
        if (form.rule) return form.rule(value);
        return spec.rule(form.toRule ? form.toRule(value) : (value as V));
      },
    },
  };
}

/** A rule that takes the value as it is. */
export const same = <T>(value: T): Checked<T> => ({ ok: true, value });

/** A stored number or nothing as form text. */
export const orBlank = (value: unknown) =>
  value === null || value === undefined ? "" : String(value);

/** JSON values in a rule's terms. */
export const jsonAs = {
  text: (value: unknown) => (typeof value === "string" ? value : undefined),
  /** null clears a field whose rule reads blank text as "none". */
  textOrNull: (value: unknown) =>
    value === null ? "" : typeof value === "string" ? value : undefined,
  numberOrNull: (value: unknown) =>
    value === null
      ? ""
      : typeof value === "number" && Number.isFinite(value)
        ? String(value)
        : undefined,
  bool: (value: unknown) => (typeof value === "boolean" ? value : undefined),
  strings: (value: unknown) =>
    Array.isArray(value) && value.every((v) => typeof v === "string")
      ? (value as string[])
      : undefined,
};

/** A form value as text ("" for a tick list or a checkbox, which text fields never are). */
export function formText(value: FormValue): string {
  return typeof value === "string" ? value : "";
}
