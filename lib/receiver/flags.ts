import type { ArgsDef } from "citty";
import { z } from "zod";
import { allValues } from "../cli/args.ts";
import { type Env, intInRange } from "../config/env.ts";
import { type Field, type Flags, fieldArgs, loadFields } from "../config/fields.ts";
import { isValidSecret } from "../webhooks/sending/signing.ts";

type ReceiverKey = "port" | "host" | "secret";

/**
 * The receiver's valued flags (NetBox's --port, plus --host and --secret) and RECEIVER_SECRET.
 * Secrets are a comma list (a whsec_ secret has no comma), and --secret may be repeated: a
 * request is valid when any of its signatures matches any of them (a rotation's overlap).
 */
export const RECEIVER_FIELDS: readonly Field<ReceiverKey>[] = [
  {
    key: "port",
    flag: "port",
    schema: intInRange(0, 65535),
    default: 9000,
    hint: "port",
    description: "port to listen on; 0 picks a free one",
  },
  {
    key: "host",
    flag: "host",
    schema: z
      .string()
      .transform((value) => value.replace(/^\[(.*)\]$/, "$1"))
      .pipe(
        z
          .string()
          .regex(/^[\w.:-]+$/, "expected an address or name to listen on, e.g. 127.0.0.1 or ::1"),
      ),
    default: "127.0.0.1",
    hint: "address",
    description: "address to listen on (0.0.0.0 or :: for every interface)",
  },
  {
    key: "secret",
    flag: "secret",
    env: "RECEIVER_SECRET",
    schema: z
      .string()
      .transform((text) => text.split(",").map((secret) => secret.trim()))
      .refine(
        (secrets) => secrets.every(isValidSecret),
        "expected whsec_ followed by the base64 of 16 to 64 bytes, as `bun run webhooks add` prints; several: a comma list or --secret again",
      ),
    secret: true,
    hint: "whsec_…",
    description:
      "check each request's Standard Webhooks signature: valid when it matches any of these secrets (a comma list; repeatable)",
  },
];

/** The receiver's flags: the fields above, and two switches. */
export const receiverArgs: ArgsDef = {
  ...fieldArgs(RECEIVER_FIELDS),
  headers: {
    type: "boolean",
    default: true,
    description: "print request headers",
    negativeDescription: "do not print request headers",
  },
  pretty: { type: "boolean", default: false, description: "pretty-print JSON bodies" },
};

export interface ReceiverFlags {
  port: number;
  host: string;
  showHeaders: boolean;
  pretty: boolean;
  /** Secrets a signature may match; undefined: signatures are not checked. */
  secrets?: string[];
}

/**
 * Validates parsed flags and RECEIVER_SECRET (a --secret replaces it); a bad one is a one-line
 * ConfigError (exit code 2). `rawArgs` gives every --secret (citty keeps only the last).
 */
export function parseReceiverFlags(
  args: Flags,
  options: { env?: Env; rawArgs?: readonly string[] } = {},
): ReceiverFlags {
  const given = options.rawArgs ? allValues(options.rawArgs, "secret") : [];
  const flags = given.length > 1 ? { ...args, secret: given.join(",") } : args;
  const { values } = loadFields(RECEIVER_FIELDS, options.env ?? {}, flags);
  return {
    port: values.port as number,
    host: values.host as string,
    showHeaders: args.headers !== false,
    pretty: args.pretty === true,
    secrets: values.secret as string[] | undefined,
  };
}
