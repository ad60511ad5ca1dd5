import { raceAbort } from "../../async/race-abort.ts";
import { type AllowList, checkDestination, type Resolver } from "../../http/ssrf.ts";
import { isTemplated } from "../rendering/template.ts";

/** A slower DNS answer gives no warning: the worker checks again at every attempt anyway. */
const RESOLVE_WAIT_MS = 1000;

export interface UrlRefusalOptions {
  /**
   * The allow-list a worker would use: this process's WEBHOOK_ALLOWED_HOSTS (workers read their
   * own; a warning can only assume they match), or the demo's.
   */
  allow: AllowList;
  resolve?: Resolver;
  waitMs?: number;
}

/**
 * Whether the SSRF guard (lib/http/ssrf.ts) will refuse a webhook URL, said once when the
 * webhook is saved or previewed instead of at every attempt: one line naming
 * WEBHOOK_ALLOWED_HOSTS, or null when a worker would send (or this process cannot tell: a
 * templated URL is checked per rendered delivery; a name that does not resolve here may resolve
 * where the worker runs).
 */
export async function urlRefusalWarning(
  url: string,
  options: UrlRefusalOptions,
): Promise<string | null> {
  if (isTemplated(url)) return null;
  let check: Awaited<ReturnType<typeof checkDestination>>;
  try {
    check = await raceAbort(
      checkDestination(url, { allow: options.allow, resolve: options.resolve }),
      AbortSignal.timeout(options.waitMs ?? RESOLVE_WAIT_MS),
    );
  } catch {
    return null;
  }
  if (check.ok || check.refused === undefined) return null;
  const { what, label, allowWith } = check.refused;
  return `Workers will refuse ${what} (${label}) unless their WEBHOOK_ALLOWED_HOSTS allows it, e.g. WEBHOOK_ALLOWED_HOSTS=${allowWith}`;
}
