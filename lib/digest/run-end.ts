import { join } from "node:path";
import type { Logger } from "../log.ts";
import type { DigestConfig } from "./config.ts";
import { emailSettings } from "./reader-config.ts";
import type { openArchive } from "./render/archive.ts";
import { digestEmail, listText, sendDigestEmail, smtpName } from "./render/email.ts";
import type { Output } from "./render/output.ts";
import type { Renderer } from "./render/types.ts";
import type { DigestMeta, StoryDigest } from "./types.ts";

/**
 * How a digest run ends: published after --out is written (the archive, then the mail), or
 * stopped short (Ctrl-C, the model gone, a failing output), and the errors that say which.
 */

/** The digest was stopped (Ctrl-C) before it was complete; --out was left as it was. */
export class DigestInterruptedError extends Error {
  override name = "DigestInterruptedError";
}

/** The model stopped answering (GONE_AFTER failures in a row): no more calls; --out left as it was. */
export class ModelGoneError extends Error {
  override name = "ModelGoneError";
}

/** Every summary the digest tried failed: the output was written, but it is of no use. */
export class DigestFailedError extends Error {
  override name = "DigestFailedError";
}

/**
 * After --out is written: the archive's page, then the mail (last: a mail server that fails
 * costs neither --out nor the archive; EmailError, exit 1).
 */
export async function publish(
  digest: { meta: DigestMeta; stories: StoryDigest[] },
  run: {
    config: DigestConfig;
    deps: { timeZone?: string; smtpTls?: { ca: string; servername?: string } };
    archive: Awaited<ReturnType<typeof openArchive>> | undefined;
    started: number;
    logger: Logger;
  },
): Promise<void> {
  const { config, deps, archive, logger } = run;
  if (archive) {
    const at = { timeZone: deps.timeZone, locale: config.language, logger };
    const { day } = await archive.write({ ...digest, at: run.started }, at);
    const page = join(config.archive ?? "", `${day}.html`);
    logger.info(`Archived as ${page}, with index.html and feed.xml`);
  }
  const email = emailSettings(config);
  if (!email) return;
  const message = digestEmail(digest, { timeZone: deps.timeZone, locale: config.language });
  await sendDigestEmail(message, email, { tls: deps.smtpTls });
  const each = email.to.length === 1 ? "" : ", a message each,";
  logger.info(
    `Emailed to ${listText(email.to)}${each} from ${email.from} through ${smtpName(email.smtp)}`,
  );
}

/**
 * A run that stopped short: a digest begun is ended with what was written (not when the output
 * itself failed), --out is left as it was, and Ctrl-C becomes its one warning line. Returns
 * what to throw.
 */
export async function stoppedShort(
  error: unknown,
  run: {
    begun: Renderer | undefined;
    done: { written: number; total: number };
    output: Output;
    signal: AbortSignal | undefined;
    outFile: string | undefined;
  },
  stopProgress: () => Logger,
): Promise<unknown> {
  const { begun, done, output, signal } = run;
  if (begun && stoppedEarly(error, signal)) {
    // On stdout the stories so far are out already: say that the rest never came. (A --out
    // file is removed below, so the old one stays.) A failing output is not written again.
    await output.write(begun.end({ written: done.written, total: done.total })).catch(() => {});
  }
  await output.abort();
  if (!signal?.aborted) return error;
  const stopped = error instanceof DigestInterruptedError ? error : interrupted(run.outFile, done);
  stopProgress().warn(stopped.message);
  return stopped;
}

export function interrupted(
  outFile: string | undefined,
  done: { written: number; total: number },
): DigestInterruptedError {
  const after =
    done.total === 0
      ? "Interrupted before the front page was read"
      : `Interrupted after ${done.written} of ${done.total} ${done.total === 1 ? "story" : "stories"}`;
  return new DigestInterruptedError(
    outFile === undefined ? after : `${after}; ${outFile} was left as it was`,
  );
}

/** Ctrl-C or the model gone: the run stopped before its last story, not for a broken output. */
function stoppedEarly(error: unknown, signal: AbortSignal | undefined): boolean {
  return (
    error instanceof DigestInterruptedError || error instanceof ModelGoneError || !!signal?.aborted
  );
}
