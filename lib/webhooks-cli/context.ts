import type { Env } from "../config/env.ts";
import { type DatabaseTarget, describeDatabase } from "../store/database-url.ts";
import { explainWriteFailure, type OpenStoreOptions, openStore } from "../store/open.ts";
import type { WebhookFields } from "../webhooks/definition/field-faces.ts";
import type { Store } from "../webhooks/ports.ts";
import { generateSecret } from "../webhooks/sending/signing.ts";
import { databaseSource, loadDatabaseTarget } from "../worker/config.ts";

/** What the admin CLI needs from outside, injected so tests run commands in-process. */
export interface CliDeps {
  env: Env;
  /** Writes one block of text to stdout (a newline is added). */
  out(text: string): void;
  /** Writes a warning to stderr (a newline is added); `out` when absent. */
  err?(text: string): void;
  openStore?: (target: DatabaseTarget, options?: OpenStoreOptions) => Promise<Store>;
  now?: () => number;
  generateSecret?: () => string;
  /** Reads an @FILE flag value (--body-template, --condition); UTF-8 text. */
  readFile?: (path: string) => string;
  /** The webhook fields of add, update and list (default WEBHOOK_FIELDS; a test's adds its own). */
  webhookFields?: WebhookFields;
}

export interface CliContext {
  store: Store;
  out(text: string): void;
  now(): number;
  generateSecret(): string;
}

/** Opens the store DATABASE_URL (or --database-url) names, runs `fn`, closes it. */
export async function withStore<T>(
  deps: CliDeps,
  flags: Record<string, unknown>,
  fn: (context: CliContext) => Promise<T>,
): Promise<T> {
  const target = loadDatabaseTarget(deps.env, flags);
  const source = databaseSource(flags);
  if (flags.verbose === true) {
    (deps.err ?? deps.out)(`Database: ${describeDatabase(target)} (${source})`);
  }
  const store = await (deps.openStore ?? openStore)(target, { source });
  try {
    return await fn({
      store,
      out: deps.out,
      now: deps.now ?? Date.now,
      generateSecret: deps.generateSecret ?? generateSecret,
    });
  } catch (error) {
    throw explainWriteFailure(error, target, source) ?? error;
  } finally {
    await store.close();
  }
}
