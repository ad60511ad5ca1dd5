import { errorMessage } from "../text/error-message.ts";

/**
 * One line naming what went wrong and where, for a failed request: "connection refused by
 * 127.0.0.1:9000" rather than Bun's "ECONNREFUSED: Unable to connect. Is the computer able to
 * access the url?", which names neither host nor port.
 *
 * `url` is the address the request went to; `name` the host name it stands for, when the
 * request was sent to an address resolved beforehand (shown beside it).
 */
export function describeNetworkError(error: unknown, url: string, name?: string): string {
  const where = destination(url, name);
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case "ECONNREFUSED":
    case "ConnectionRefused":
      return `connection refused by ${where}`;
    case "ECONNRESET":
    case "ConnectionClosed":
      return `connection closed by ${where} before it answered`;
    case "ENOTFOUND":
      return `host not found: ${name ?? hostOf(url)}`;
    case "ETIMEDOUT":
      return `no answer from ${where}`;
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `no route to ${where}`;
    case "EPROTO":
      return `TLS handshake with ${where} failed: does it speak TLS on this port?`;
    default: {
      const message = errorMessage(error);
      return `${firstLine(message)} (${where})`;
    }
  }
}

/**
 * describeNetworkError for a request sent through a proxy (`proxy`: its URL, password masked):
 * a connection never made names the proxy, the one connection a proxied request makes
 * ("connection refused by the proxy 10.0.0.3:3128, for hooks.example:443"); anything else names
 * the destination, as the proxy carried the request that far.
 */
export function describeProxiedError(error: unknown, url: string, proxy: string): string {
  const code = (error as { code?: unknown } | null)?.code;
  const at = destination(proxy, undefined);
  const target = `, for ${destination(url, undefined)}`;
  switch (code) {
    case "ECONNREFUSED":
    case "ConnectionRefused":
      return `connection refused by the proxy ${at}${target}`;
    case "ENOTFOUND":
      return `the proxy's host not found: ${hostOf(proxy)}${target}`;
    case "ETIMEDOUT":
      return `no answer from the proxy ${at}${target}`;
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `no route to the proxy ${at}${target}`;
    default:
      return `${describeNetworkError(error, url)}, through the proxy ${proxy}`;
  }
}

function destination(url: string, name: string | undefined): string {
  try {
    const parsed = new URL(url);
    const port = parsed.port || (parsed.protocol === "https:" ? "443" : "80");
    const host = `${parsed.hostname}:${port}`;
    return name && name !== parsed.hostname.replace(/^\[|\]$/g, "") ? `${host} (${name})` : host;
  } catch {
    return url;
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

function firstLine(text: string): string {
  return text.split("\n")[0] ?? text;
}
