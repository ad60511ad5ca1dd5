import { describe, expect, test } from "bun:test";
import { parseArgs } from "citty";
import { ConfigError } from "../../lib/config/errors.ts";
import { listenUrl } from "../../lib/http/listen.ts";
import { parseReceiverFlags, receiverArgs } from "../../lib/receiver/flags.ts";
import { generateSecret } from "../../lib/webhooks/sending/signing.ts";

/** Parses a command line the way the script does: citty first, then our checks. */
function flags(...rawArgs: string[]) {
  return parseReceiverFlags(parseArgs(rawArgs, receiverArgs));
}

function configError(...rawArgs: string[]): string {
  try {
    flags(...rawArgs);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`no error for ${rawArgs.join(" ")}`);
}

describe("parseReceiverFlags()", () => {
  test("defaults to 127.0.0.1:9000 with headers, no pretty-printing and no secret", () => {
    expect(flags()).toEqual({
      port: 9000,
      host: "127.0.0.1",
      showHeaders: true,
      pretty: false,
      secrets: undefined,
    });
  });

  test("reads --port, --host, --no-headers, --pretty and --secret", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    expect(
      flags("--port", "0", "--host", "[::1]", "--no-headers", "--pretty", "--secret", secret),
    ).toEqual({ port: 0, host: "::1", showHeaders: false, pretty: true, secrets: [secret] });
    expect(flags("--port=65535", "--host=0.0.0.0").port).toBe(65535);
  });

  test("rejects a port that is not a whole number from 0 to 65535", () => {
    const expected = "is invalid: expected a whole number from 0 to 65535";
    expect(configError("--port", "abc")).toBe(`--port="abc" ${expected}`);
    expect(configError("--port", "65536")).toBe(`--port="65536" ${expected}`);
    expect(configError("--port", "-1")).toBe(`--port="-1" ${expected}`);
    expect(configError("--port", "80.5")).toBe(`--port="80.5" ${expected}`);
    expect(configError("--port")).toBe(
      `--port needs a value: ${expected.replace("is invalid: ", "")}`,
    );
  });

  test("rejects a bad secret without repeating it", () => {
    const message = configError("--secret", "hunter2");
    expect(message).toStartWith("--secret is invalid: expected whsec_ followed by the base64");
    expect(message).not.toContain("hunter2");
    expect(configError("--secret", "whsec_c2hvcnQ=")).toStartWith("--secret is invalid");
  });

  test("takes several secrets: --secret again, a comma list, or RECEIVER_SECRET", () => {
    const [a, b, c] = [generateSecret(), generateSecret(), generateSecret()];
    const raw = ["--secret", a, `--secret=${b},${c}`];
    expect(parseReceiverFlags(parseArgs(raw, receiverArgs), { rawArgs: raw }).secrets).toEqual([
      a,
      b,
      c,
    ]);
    const env = { RECEIVER_SECRET: `${a}, ${b}` };
    expect(parseReceiverFlags({}, { env }).secrets).toEqual([a, b]);
    // A --secret replaces the variable, as every flag does its variable.
    const flag = ["--secret", c];
    expect(
      parseReceiverFlags(parseArgs(flag, receiverArgs), { env, rawArgs: flag }).secrets,
    ).toEqual([c]);
  });

  test("a bad secret in RECEIVER_SECRET or a list names the variable, never the value", () => {
    let message = "";
    try {
      parseReceiverFlags({}, { env: { RECEIVER_SECRET: `${generateSecret()},hunter2` } });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message).toStartWith("RECEIVER_SECRET is invalid: expected whsec_");
    expect(message).not.toContain("hunter2");
    expect(configError("--secret", `${generateSecret()},`)).toStartWith("--secret is invalid");
  });

  test("rejects an empty or malformed host", () => {
    expect(configError("--host", "")).toStartWith("--host needs a value");
    expect(configError("--host", "a b")).toStartWith('--host="a b" is invalid');
  });
});

describe("listenUrl()", () => {
  test("brackets IPv6 hosts", () => {
    expect(listenUrl("127.0.0.1", 9000)).toBe("http://127.0.0.1:9000");
    expect(listenUrl("::1", 9000)).toBe("http://[::1]:9000");
  });
});
