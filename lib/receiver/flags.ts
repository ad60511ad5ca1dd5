import type { ArgsDef } from "citty";
import { UsageError } from "../config/errors.ts";
import { isValidSecret } from "../webhooks/signing.ts";

const DEFAULT_PORT = "9000";
const DEFAULT_HOST = "127.0.0.1";

/** The receiver's flags, as NetBox's webhook_receiver has them plus --host, --pretty, --secret. */
export const receiverArgs: ArgsDef = {
  port: {
    type: "string",
    default: DEFAULT_PORT,
    description: "Port to listen on (0 picks a free one)",
  },
  host: {
    type: "string",
    default: DEFAULT_HOST,
    description: "Address to listen on (0.0.0.0 for every interface)",
  },
  headers: {
    type: "boolean",
    default: true,
    description: "Print request headers",
    negativeDescription: "Do not print request headers",
  },
  pretty: { type: "boolean", default: false, description: "Pretty-print JSON bodies" },
  secret: {
    type: "string",
    description: "A whsec_ secret: check each request's Standard Webhooks signature",
  },
};

export interface ReceiverFlags {
  port: number;
  host: string;
  showHeaders: boolean;
  pretty: boolean;
  secret?: string;
}

/** Validates parsed flags; a bad one is a UsageError (one line, exit code 2). */
export function parseReceiverFlags(args: Record<string, unknown>): ReceiverFlags {
  const known = new Set(["_", ...Object.keys(receiverArgs)]);
  const unknown = Object.keys(args).find((name) => !known.has(name));
  if (unknown !== undefined) {
    throw new UsageError(
      `Unknown flag --${unknown}: expected --port, --host, --no-headers, --pretty or --secret`,
    );
  }
  const positional = Array.isArray(args._) ? args._ : [];
  if (positional.length > 0) {
    throw new UsageError(`Unexpected argument ${JSON.stringify(String(positional[0]))}`);
  }

  const port = String(args.port ?? DEFAULT_PORT);
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) {
    throw new UsageError(
      `--port ${JSON.stringify(port)} is invalid: expected a whole number from 0 to 65535 (0 picks a free port)`,
    );
  }
  const host = String(args.host ?? DEFAULT_HOST).replace(/^\[(.*)\]$/, "$1");
  if (!/^[\w.:-]+$/.test(host)) {
    throw new UsageError(
      `--host ${JSON.stringify(host)} is invalid: expected an address or name to listen on, e.g. 127.0.0.1 or ::1`,
    );
  }
  const secret = args.secret === undefined ? undefined : String(args.secret);
  if (secret !== undefined && !isValidSecret(secret)) {
    // The value itself is not repeated: it is a secret.
    throw new UsageError(
      "--secret is invalid: expected whsec_ followed by the base64 of 16 to 64 bytes, as `bun run webhooks add` prints",
    );
  }
  return {
    port: Number(port),
    host,
    showHeaders: args.headers !== false,
    pretty: args.pretty === true,
    secret,
  };
}
