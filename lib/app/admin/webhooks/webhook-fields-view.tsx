/** @jsxImportSource hono/jsx */

import type { Child } from "hono/jsx";
import type {
  FormFace,
  FormValue,
  WebhookField,
  WebhookFields,
} from "../../../webhooks/definition/field-faces.ts";
import type { Webhook } from "../../../webhooks/model.ts";
import { FieldErrors } from "../layout.tsx";
import { removalName, type WebhookFormValues } from "./webhook-form.ts";

/**
 * The webhook form's inputs, one per row of the field table with a form face, in the table's
 * order: each its label, hint, input and the errors under it. `after` puts something under a
 * field's input (the URL's warning).
 */
export function WebhookFieldInputs(props: {
  fields: WebhookFields;
  values: WebhookFormValues;
  errors: Record<string, string[] | undefined>;
  /** The webhook edited; absent when creating one. */
  webhook?: Webhook;
  after?: Record<string, Child>;
}) {
  return (
    <>
      {props.fields.map((row) =>
        row.form ? (
          <FieldInput
            row={row}
            form={row.form}
            value={props.values[row.key] ?? row.form.initial}
            values={props.values}
            errors={props.errors[row.key]}
            webhook={props.webhook}
            after={props.after?.[row.key]}
          />
        ) : null,
      )}
    </>
  );
}

function FieldInput(props: {
  row: WebhookField;
  form: FormFace;
  value: FormValue;
  values: WebhookFormValues;
  errors?: string[];
  webhook?: Webhook;
  after?: Child;
}) {
  const { row, form, value, webhook } = props;
  const { input } = form;
  const name = row.key;
  const text = typeof value === "string" ? value : "";
  const hint = typeof form.hint === "function" ? form.hint(webhook) : form.hint;
  const hintLine = hint === undefined ? null : <Hint text={hint} />;
  const errors = <FieldErrors messages={props.errors} />;
  switch (input.kind) {
    case "checkboxes":
      return (
        <fieldset>
          <legend>{form.label}</legend>
          {input.choices.map(([choice, label]) => (
            <label>
              <input
                type="checkbox"
                name={name}
                value={choice}
                checked={Array.isArray(value) && value.includes(choice)}
              />{" "}
              {label}
            </label>
          ))}
          {errors}
        </fieldset>
      );
    case "checkbox":
      return (
        <>
          <label>
            <input
              type="checkbox"
              name={input.name ?? name}
              checked={(value === true) !== (input.inverted === true)}
            />{" "}
            {form.label}
            {hintLine}
          </label>
          {errors}
        </>
      );
    case "password": {
      const held = webhook ? (webhook as unknown as Record<string, unknown>)[name] : null;
      return (
        <>
          <label>
            {form.label}
            {hintLine}
            <input type="password" name={name} value="" autocomplete="off" />
            {errors}
          </label>
          {held ? (
            <label>
              <input
                type="checkbox"
                name={removalName(name)}
                checked={props.values[removalName(name)] === true}
              />{" "}
              {input.removable}
            </label>
          ) : null}
        </>
      );
    }
    case "select":
      return (
        <label>
          {form.label}
          <select name={name}>
            {input.options.map((option) => (
              <option value={option} selected={text === option}>
                {option}
              </option>
            ))}
          </select>
          {errors}
        </label>
      );
    case "textarea":
      return (
        <label>
          {form.label}
          {hintLine}
          <textarea name={name} rows={input.rows} spellcheck={input.code ? false : undefined}>
            {text}
          </textarea>
          {errors}
        </label>
      );
    default:
      return (
        <label>
          {form.label}
          {hintLine}
          <input
            type="text"
            name={name}
            value={text}
            inputmode={input.inputmode}
            required={input.required}
            maxlength={input.maxlength}
          />
          {errors}
          {props.after}
        </label>
      );
  }
}

/** A hint: text, with `backticks` as code. */
function Hint(props: { text: string }) {
  const parts = props.text.split("`");
  return (
    <span class="hint">{parts.map((part, i) => (i % 2 === 1 ? <code>{part}</code> : part))}</span>
  );
}

/** The notes of the options a webhook uses (the rows' short notes), in a line under its events. */
export function OptionNote(props: { webhook: Webhook; fields: WebhookFields }) {
  const notes = props.fields
    .map((row) => row.note?.short(props.webhook) ?? null)
    .filter((note) => note !== null);
  return notes.length === 0 ? null : <div class="muted">{notes.join(", ")}</div>;
}
