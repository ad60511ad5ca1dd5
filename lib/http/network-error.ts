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
