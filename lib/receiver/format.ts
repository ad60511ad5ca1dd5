import { escapeControl } from "../text/control.ts";
import type { VerifyResult } from "../webhooks/sending/signing.ts";
import { HEX_PREVIEW_BYTES, hexPreview } from "./hexdump.ts";
import { prettyJson } from "./pretty-json.ts";

/** One request as the receiver saw it: everything formatRequest needs, nothing to await. */
export interface ReceivedRequest {
  /** Position of this request since the receiver started, from 1. */
  counter: number;
  date: Date;
  clientAddress: string;
  method: string;
  /** Path plus query string, as in the request line. */
  target: string;
  /** In the order received (Bun hands them lowercased and sorted). */
  headers: Array<[string, string]>;
  /** The body, or its first part when `size` is larger (the receiver keeps 64 KiB). */
  body: Uint8Array;
  /** The whole body's size in bytes. */
  size: number;
  /** The Standard Webhooks check, when the receiver was given a secret. */
  signature?: VerifyResult;
  /** Why the body could not be read (the client went away mid-body). */
  bodyError?: string;
}

export interface FormatOptions {
  showHeaders: boolean;
  pretty: boolean;
}

/**
 * The block NetBox's webhook_receiver prints for a request, without a final newline:
 * `[N] <RFC 1123 date> <client> "<METHOD> <target> HTTP/1.1" 200 -`, the headers and a blank
 * line (unless hidden), the body or `(No body)`, a `Signature:` line when checked, and twelve
 * dashes. Everything from the peer is shown with control characters escaped.
 */
export function formatRequest(request: ReceivedRequest, options: FormatOptions): string {
  const lines = [
    `[${request.counter}] ${request.date.toUTCString()} ${oneLine(request.clientAddress)} "${oneLine(request.method)} ${oneLine(request.target)} HTTP/1.1" 200 -`,
  ];
  if (options.showHeaders) {
    for (const [name, value] of request.headers) lines.push(`${oneLine(name)}: ${oneLine(value)}`);
    lines.push("");
  }
  lines.push(formatBody(request, options.pretty));
  if (request.signature !== undefined) {
    lines.push(
      request.signature.valid
        ? "Signature: valid"
        : `Signature: INVALID (${oneLine(request.signature.reason)})`,
    );
  }
  lines.push("------------");
  return lines.join("\n");
}

function formatBody(request: ReceivedRequest, pretty: boolean): string {
  if (request.bodyError !== undefined) return `(body not received: ${oneLine(request.bodyError)})`;
  if (request.size === 0) return "(No body)";
  const cut = request.body.length < request.size;
  const text = decodeText(request.body, cut);
  if (text === null) {
    const shown = request.size > HEX_PREVIEW_BYTES ? `, first ${HEX_PREVIEW_BYTES} shown` : "";
    return `(binary body: ${request.size} bytes${shown})\n${hexPreview(request.body)}`;
  }
  const body = escapeControl(pretty && !cut ? (prettyJson(text) ?? text) : text);
  return cut
    ? `${body}\n(body cut at ${request.body.length} bytes: ${request.size} bytes received)`
    : body;
}

/**
 * The body as text, or null when it is binary: not UTF-8, or holding a NUL byte. A cut body may
 * end inside a multi-byte character; stream mode leaves that tail out instead of failing.
 */
function decodeText(bytes: Uint8Array, cut: boolean): string | null {
  if (bytes.includes(0)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes, {
      stream: cut,
    });
  } catch {
    return null;
  }
}

/** For fields that must stay on their line: controls escaped, newlines too. */
function oneLine(text: string): string {
  // Most headers are plain printable ASCII: skip the escaping regexes for them.
  if (PRINTABLE_ASCII.test(text)) return text;
  return escapeControl(text).replace(/\n/g, "\\x0a");
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
