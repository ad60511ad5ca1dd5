import { raceAbort } from "../../async/race-abort.ts";
import { type AllowList, checkDestination, pinnedTarget, type Resolver } from "../../http/ssrf.ts";
import { escapeControl } from "../../text/control.ts";

/** Redirects followed before giving up, as browsers stop at about twenty; articles need few. */
export const MAX_REDIRECTS = 5;

export type GuardedFetch =
  | { ok: true; response: Response; url: string }
  | { ok: false; reason: string };

export interface GuardedFetchOptions {
  allow: AllowList;
  resolve?: Resolver;
  fetch?: typeof fetch;
  signal: AbortSignal;
  headers: Record<string, string>;
}

/**
 * GETs a story's link the way the webhook worker sends a delivery: every hop (the link and each
 * redirect) is checked by the SSRF guard first, so a front-page link cannot make the digest read
 * the user's own network (loopback, private, link-local and cloud-metadata addresses) unless
 * DIGEST_ALLOWED_HOSTS allows it, and the request goes to the address that was checked, so a DNS
 * answer that changes in between cannot send it elsewhere.
 */
export async function fetchGuarded(
  url: string,
  options: GuardedFetchOptions,
): Promise<GuardedFetch> {
  const doFetch = options.fetch ?? globalThis.fetch;
  let current = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const check = await raceAbort(
      checkDestination(current, {
        allow: options.allow,
        resolve: options.resolve,
        variable: "DIGEST_ALLOWED_HOSTS",
      }),
      options.signal,
    );
    if (!check.ok) {
      const reason = check.reason;
      return {
        ok: false,
        reason:
          hop === 0
            ? `the link was not followed (${reason})`
            : `it redirects to ${clip(current)}, which was not followed (${reason})`,
      };
    }
    const target = pinnedTarget(current, check.addresses);
    const response = await doFetch(target.url, {
      ...(target.tls ? { tls: target.tls } : {}),
      signal: options.signal,
      redirect: "manual",
      headers: { ...options.headers, ...(target.host ? { host: target.host } : {}) },
    });
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel().catch(() => {});
      try {
        current = new URL(location, current).href;
      } catch {
        return {
          ok: false,
          reason: `it redirects to an invalid address (${clip(escapeControl(location))})`,
        };
      }
      continue;
    }
    return { ok: true, response, url: current };
  }
  return { ok: false, reason: `it redirects more than ${MAX_REDIRECTS} times` };
}

function clip(url: string): string {
  return url.length > 200 ? `${url.slice(0, 200)}…` : url;
}
