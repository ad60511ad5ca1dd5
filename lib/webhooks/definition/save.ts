import { keepStoredPassword } from "../../text/url-credentials.ts";
import type { NewWebhook, Webhook, WebhookPatch } from "../model.ts";
import type { WebhookRepo } from "../ports.ts";
import { unboundedTemplate } from "../rendering/template-trial.ts";
import { checkCaFileContent } from "../sending/ca-file.ts";
import { ClientCertificateError, readClientCertificate } from "../sending/client-cert.ts";
import { checkNewUrl } from "./validate.ts";

/**
 * The one way a webhook is saved (created or changed) by the API, the admin form and the CLI,
 * after each field passed its rule (field-table.ts), with the checks only a save makes, once:
 * a URL's `***` password (refused on a new webhook, where it would be sent as the password;
 * on a change, it keeps the stored one), a CA file that must be a readable PEM file now, a
 * client certificate and key given together, readable and matching each other, and templates that must render a sample item within the render limits (template-trial.ts).
 * A taken name is the store's DuplicateWebhookNameError, thrown.
 */

/** A save refused: the field (its stored key), why, and the value as given when it is quoted. */
export interface SaveRefusal {
  key: keyof NewWebhook;
  problem: string;
  /** The value the problem is about, as given (the CLI quotes it); absent for a template's trial. */
  given?: string;
}

export interface WebhookSave {
  /** The webhook as stored, or null to create one. */
  before: Webhook | null;
  /** The fields given, each already by its rule (a new webhook: at least name and url). */
  fields: WebhookPatch;
  /** A new webhook given no secret gets this one, made once the checks pass. */
  generateSecret?: () => string;
}

export type CheckedSave = { ok: true; fields: WebhookPatch } | { ok: false; refused: SaveRefusal };

export type SavedWebhook = { ok: true; webhook: Webhook } | { ok: false; refused: SaveRefusal };

/** The save-time checks without the write (the admin's Preview runs them too). */
export async function checkSave(save: WebhookSave): Promise<CheckedSave> {
  const { before } = save;
  const fields: WebhookPatch = { ...save.fields };
  if (fields.url !== undefined) {
    if (before !== null) fields.url = keepStoredPassword(fields.url, before.url);
    else {
      const url = checkNewUrl(fields.url);
      if (!url.ok) return refused({ key: "url", problem: url.problem, given: fields.url });
    }
  }
  if (typeof fields.caFile === "string") {
    const content = await checkCaFileContent(fields.caFile);
    if (!content.ok)
      return refused({ key: "caFile", problem: content.problem, given: fields.caFile });
  }
  const client = await checkClientPair(fields, before);
  if (client) return refused(client);
  if (
    fields.url !== undefined ||
    fields.headers !== undefined ||
    fields.bodyTemplate !== undefined
  ) {
    const unbounded = await unboundedTemplate({
      url: fields.url ?? before?.url ?? "",
      headers: fields.headers ?? before?.headers ?? [],
      bodyTemplate:
        fields.bodyTemplate === undefined ? (before?.bodyTemplate ?? null) : fields.bodyTemplate,
    });
    if (unbounded) return refused({ key: unbounded.field, problem: unbounded.problem });
  }
  return { ok: true, fields };
}

/** Checks, then creates (`before` null) or changes the webhook. */
export async function saveWebhook(repo: WebhookRepo, save: WebhookSave): Promise<SavedWebhook> {
  const checked = await checkSave(save);
  if (!checked.ok) return checked;
  const { fields } = checked;
  if (save.before === null && fields.secret === undefined && save.generateSecret) {
    fields.secret = save.generateSecret();
  }
  const webhook =
    save.before === null
      ? await repo.create(fields as NewWebhook)
      : await repo.update(save.before.id, fields);
  return { ok: true, webhook };
}

/**
 * The client certificate and key as they will be stored (given, or kept), checked when either
 * is given: both or neither, and a pair that reads and matches (client-cert.ts). Null: fine.
 */
async function checkClientPair(
  fields: WebhookPatch,
  before: Webhook | null,
): Promise<SaveRefusal | null> {
  if (fields.clientCertFile === undefined && fields.clientKeyFile === undefined) return null;
  const cert =
    fields.clientCertFile !== undefined ? fields.clientCertFile : (before?.clientCertFile ?? null);
  const key =
    fields.clientKeyFile !== undefined ? fields.clientKeyFile : (before?.clientKeyFile ?? null);
  if (cert === null && key === null) return null;
  if (cert === null || key === null) {
    // The field given is the one refused (both given, one null: the null one).
    const blamed =
      fields.clientCertFile === undefined || (fields.clientKeyFile !== undefined && key === null)
        ? "clientKeyFile"
        : "clientCertFile";
    return {
      key: blamed,
      problem: "the client certificate and its key go together: give both files, or clear both",
    };
  }
  try {
    await readClientCertificate(cert, key);
    return null;
  } catch (error) {
    const onKey = error instanceof ClientCertificateError && error.file === "key";
    const path = onKey ? key : cert;
    const message = error instanceof Error ? error.message : String(error);
    return {
      key: onKey ? "clientKeyFile" : "clientCertFile",
      problem: `cannot use ${JSON.stringify(path)}: ${message}`,
      given: path,
    };
  }
}

function refused(refusal: SaveRefusal): { ok: false; refused: SaveRefusal } {
  return { ok: false, refused: refusal };
}
