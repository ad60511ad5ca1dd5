import { UsageError } from "../config/errors.ts";

/** Thrown by a WebhookRepo when a name is taken (the admin UI answers 409, the CLI exits 2). */
export class DuplicateWebhookNameError extends UsageError {
  override name = "DuplicateWebhookNameError";
  constructor(readonly webhookName: string) {
    super(`A webhook named ${JSON.stringify(webhookName)} already exists`);
  }
}

/** Thrown by a WebhookRepo's update for an unknown id (404 / exit 2). */
export class WebhookNotFoundError extends UsageError {
  override name = "WebhookNotFoundError";
  constructor(readonly webhookId: number) {
    super(`No webhook with id ${webhookId}`);
  }
}
