import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_OPTION_FILE_BYTES } from "../../lib/webhooks-cli/option-file.ts";
import { LOOP_BOMB, STOPPED, STRING_BOMB } from "../fakes/template-bombs.ts";
import { usageRefusal, useWebhooksCliFile } from "../fakes/webhooks-cli-file.ts";

const T0 = Date.UTC(2030, 0, 1);
const CA_FILE = join(import.meta.dir, "..", "fakes", "tls", "hook-test.crt");
const CLIENT_CERT = join(import.meta.dir, "..", "fakes", "tls", "client.crt");
const CLIENT_KEY = join(import.meta.dir, "..", "fakes", "tls", "client.key");
const OTHER_KEY = join(import.meta.dir, "..", "fakes", "tls", "other.key");
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

const { files, cli } = useWebhooksCliFile("webhooks-options-", { now: () => T0 });

/** Runs a command that must fail as bad input: exit code 2 and one line of message. */
function refused(...rawArgs: string[]): Promise<string> {
  return usageRefusal(() => cli(...rawArgs));
}

const add = ["add", "--name", "chat", "--url", "https://chat.example/hook", "--secret", SECRET];

describe("webhooks add/update with NetBox's options", () => {
  test("add takes a body template, a condition, TLS options and a timeout", async () => {
    const output = await cli(
      ...add,
      "--body-template",
      '{"text": {{ data.name | tojson }}}',
      "--condition",
      '{"and": [{"attr": "quantity", "op": "lt", "value": 5}]}',
      "--no-ssl-verify",
      "--ca-file",
      CA_FILE,
      "--timeout-ms",
      "2500",
    );
    const [hook] = await files.store.webhooks.list();
    expect(hook).toMatchObject({
      bodyTemplate: '{"text": {{ data.name | tojson }}}',
      conditions: { and: [{ attr: "quantity", op: "lt", value: 5 }] },
      sslVerification: false,
      caFile: CA_FILE,
      timeoutMs: 2500,
    });
    expect(output).toContain("body template (1 line)");
    expect(output).toContain("TLS verification off");
    expect(output).toContain("timeout 2500 ms");
  });

  test("@FILE reads the template and the condition from files", async () => {
    const template = join(files.dir, "slack.j2");
    const condition = join(files.dir, "low.json");
    writeFileSync(template, '{\n  "text": {{ (data.name ~ " is low") | tojson }}\n}\n');
    writeFileSync(condition, '{"or": [{"attr": "quantity", "op": "lte", "value": 2}]}');
    await cli(...add, "--body-template", `@${template}`, `--condition=@${condition}`);
    const [hook] = await files.store.webhooks.list();
    expect(hook?.bodyTemplate).toBe('{\n  "text": {{ (data.name ~ " is low") | tojson }}\n}\n');
    expect(hook?.conditions).toEqual({ or: [{ attr: "quantity", op: "lte", value: 2 }] });
  });

  test("a template that does not parse is refused with its line and column", async () => {
    const message = await refused(...add, "--body-template", "ok\n{% if data.x %}open");
    expect(message).toBe(
      "Invalid --body-template: template error at line 2, column 16: syntax error: unexpected end of input, expected end of block",
    );
    expect(await files.store.webhooks.list()).toEqual([]);
  });

  test("a bad condition is refused with the path of the bad node", async () => {
    expect(
      await refused(...add, "--condition", '{"and": [{"attr": "x", "value": 1, "op": "like"}]}'),
    ).toStartWith('Invalid --condition: at $.and[0].op: unknown operator "like"');
    expect(await refused(...add, "--condition", "{nope")).toStartWith(
      "Invalid --condition: at $: not valid JSON",
    );
  });

  test("a regex condition over the size cap is refused with its size, the cap and the path", async () => {
    const big =
      '{"or": [{"attr": "name", "op": "regex", "value": "((a|b){1,30}){1,30}((a|b){1,30}){1,30}"}]}';
    expect(await refused(...add, "--condition", big)).toBe(
      "Invalid --condition: at $.or[0].value: the regex compiles to 7,320 instructions: at most 5,000 (nested counted repetitions such as (a{1,30}){1,30} multiply)",
    );
    expect(await files.store.webhooks.list()).toEqual([]);
  });

  test("a templated URL and header values are checked when saved", async () => {
    await cli(
      "add",
      "--name",
      "t",
      "--url",
      "https://hooks.example/{{ model }}/{{ data.id }}",
      "--header",
      "X-Sku: {{ data.sku }}",
    );
    expect((await files.store.webhooks.list())[0]?.url).toBe(
      "https://hooks.example/{{ model }}/{{ data.id }}",
    );
    expect(await refused("add", "--name", "u", "--url", "{{ data.url }}")).toContain(
      "a template may fill in the parts after the scheme",
    );
    expect(
      await refused("add", "--name", "v", "--url", "https://x/", "--header", "X-A: {{ data."),
    ).toStartWith("Invalid --header: header X-A: template error at line 1");
  });

  test("--retry-schedule takes day, short, none or delays; update changes it; list shows it", async () => {
    await cli(...add);
    expect((await files.store.webhooks.getByName("chat"))?.retrySchedule).toBe("day");
    for (const [given, stored] of [
      ["none", "none"],
      ["short", "short"],
      ["5s, 5m,30m,2h", [5_000, 300_000, 1_800_000, 7_200_000]],
      ["day", "day"],
    ] as const) {
      await cli("update", "chat", "--retry-schedule", given);
      expect((await files.store.webhooks.getByName("chat"))?.retrySchedule).toEqual(stored);
    }
    await cli("update", "chat", "--retry-schedule", "1m,1h");
    expect(await cli("list")).toContain("retries 1m,1h");
    expect(JSON.parse(await cli("list", "--json"))[0]).toMatchObject({ retrySchedule: "1m,1h" });
  });

  test("a bad --retry-schedule is one line naming the value and the form, exit 2", async () => {
    expect(await refused(...add, "--retry-schedule", "weekly")).toBe(
      'Invalid --retry-schedule "weekly": "weekly" is not a delay: expected none, short, day or a comma list of delays such as 5s,5m,30m,2h (each 1s to 7d, at most 99)',
    );
    await cli(...add);
    expect(await refused("update", "chat", "--retry-schedule", "5,10")).toStartWith(
      'Invalid --retry-schedule "5,10": "5" is not a delay',
    );
    expect(await refused("update", "chat", "--retry-schedule", "30d")).toContain("out of range");
  });

  test("bad --timeout-ms, --ca-file and an unreadable @FILE are one line, exit 2", async () => {
    expect(await refused(...add, "--timeout-ms", "50")).toStartWith('Invalid --timeout-ms "50"');
    expect(await refused(...add, "--ca-file", "relative.pem")).toStartWith(
      'Invalid --ca-file "relative.pem"',
    );
    expect(await refused(...add, "--body-template", `@${join(files.dir, "none.j2")}`)).toContain(
      "ENOENT",
    );
  });

  test("an @FILE that is a FIFO, a device or too large is refused at once, exit 2", async () => {
    const fifo = join(files.dir, "pipe.j2");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    // Read as a file, the FIFO would wait for a writer forever and /dev/zero fill the memory.
    expect(await refused(...add, "--body-template", `@${fifo}`)).toBe(
      `Cannot read --body-template file ${JSON.stringify(fifo)}: not a regular file; expected @ followed by a readable file`,
    );
    expect(await refused(...add, "--condition", "@/dev/zero")).toContain(
      '"/dev/zero": not a regular file',
    );
    const large = join(files.dir, "large.j2");
    writeFileSync(large, "x".repeat(MAX_OPTION_FILE_BYTES + 1));
    expect(await refused(...add, "--body-template", `@${large}`)).toContain(
      `larger than ${MAX_OPTION_FILE_BYTES} bytes`,
    );
    expect(await files.store.webhooks.list()).toHaveLength(0);
  });

  test("a template that overruns its render deadline with a sample item is refused when saved", async () => {
    const message = await refused(...add, "--body-template", LOOP_BOMB);
    expect(message).toStartWith(
      "Invalid --body-template: with a sample item, rendering took longer",
    );
    expect(message).toMatch(STOPPED);
    expect(message).toEndWith(": a template must stay within the limits for any change");
    // A constant expression is worked out when the template is compiled (in the renderer).
    expect(await refused(...add, "--header", `X-A: ${STRING_BOMB}`)).toEndWith(
      "template error at the template engine failed: out of memory (at most 64 MiB) or an internal error",
    );
    await cli(...add);
    expect(await refused("update", "chat", "--body-template", LOOP_BOMB)).toStartWith(
      "Invalid --body-template: with a sample item, rendering took longer than",
    );
    expect((await files.store.webhooks.list())[0]?.bodyTemplate).toBeNull();
  });

  test("a CA file that is not a regular file of PEM certificates is refused when saved", async () => {
    const fifo = join(files.dir, "ca.fifo");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    expect(await refused(...add, "--ca-file", fifo)).toBe(
      `Invalid --ca-file "${fifo}": cannot use "${fifo}": not a regular file (a FIFO)`,
    );
    writeFileSync(join(files.dir, "ca.pem"), "not a certificate");
    expect(await refused(...add, "--ca-file", join(files.dir, "ca.pem"))).toEndWith(
      "no PEM certificate in it",
    );
    expect(await files.store.webhooks.list()).toEqual([]);
  });

  test("--client-cert-file and --client-key-file set the pair; a key of another is refused", async () => {
    expect(
      await refused(...add, "--client-cert-file", CLIENT_CERT, "--client-key-file", OTHER_KEY),
    ).toStartWith(
      `Invalid --client-key-file "${OTHER_KEY}": cannot use "${OTHER_KEY}": the key does not match the certificate`,
    );
    expect(await refused(...add, "--client-cert-file", CLIENT_CERT)).toStartWith(
      "Invalid --client-cert-file",
    );
    await cli(...add, "--client-cert-file", CLIENT_CERT, "--client-key-file", CLIENT_KEY);
    expect(await files.store.webhooks.list()).toMatchObject([
      { clientCertFile: CLIENT_CERT, clientKeyFile: CLIENT_KEY },
    ]);
    await cli("update", "chat", "--client-cert-file", "none", "--client-key-file", "none");
    expect(await files.store.webhooks.list()).toMatchObject([
      { clientCertFile: null, clientKeyFile: null },
    ]);
  });

  test("--ordered turns ordering per object on, --no-ordered off; list shows it", async () => {
    expect(await cli(...add, "--ordered")).toContain("ordered per object");
    expect((await files.store.webhooks.list())[0]?.ordered).toBe(true);
    expect(await cli("list")).toContain("    ordered per object");
    await cli("update", "chat", "--timeout-ms", "3000");
    expect((await files.store.webhooks.list())[0]?.ordered).toBe(true);
    await cli("update", "chat", "--no-ordered");
    expect((await files.store.webhooks.list())[0]?.ordered).toBe(false);
    expect(await cli("list")).not.toContain("ordered");
    expect(JSON.parse(await cli("list", "--json"))[0].ordered).toBe(false);
  });

  test("update sets, keeps and clears the options", async () => {
    await cli(...add, "--body-template", "{{ event }}", "--condition", '{"and": []}');
    await cli("update", "chat", "--no-ssl-verify", "--timeout-ms", "3000");
    expect((await files.store.webhooks.list())[0]).toMatchObject({
      bodyTemplate: "{{ event }}",
      conditions: { and: [] },
      sslVerification: false,
      timeoutMs: 3000,
    });
    await cli(
      "update",
      "chat",
      "--clear-body-template",
      "--clear-condition",
      "--ssl-verify",
      "--timeout-ms",
      "0",
    );
    expect((await files.store.webhooks.list())[0]).toMatchObject({
      bodyTemplate: null,
      conditions: null,
      sslVerification: true,
      timeoutMs: null,
    });
    expect(await refused("update", "chat", "--clear-condition", "--condition", '{"and": []}')).toBe(
      "Give either --clear-condition or --condition, not both",
    );
  });

  test("list shows the options under the webhook; --json has every field", async () => {
    await cli(...add, "--condition", '{"and": [{"attr": "sku", "value": "A"}]}', "--disabled");
    const text = await cli("list");
    expect(text).toContain('    condition {"and":[{"attr":"sku","value":"A"}]}');
    const [listed] = JSON.parse(await cli("list", "--json"));
    expect(listed).toMatchObject({
      bodyTemplate: null,
      conditions: { and: [{ attr: "sku", value: "A" }] },
      sslVerification: true,
      caFile: null,
      timeoutMs: null,
    });
  });

  test("emit renders templates per webhook; show prints the rendered URL, headers and context", async () => {
    await cli(
      "add",
      "--name",
      "chat",
      "--url",
      "https://chat.example/{{ data.sku }}",
      "--header",
      "X-Who: {{ username }}",
      "--body-template",
      '{"text": {{ data.name | tojson }}}',
    );
    await cli(
      "add",
      "--name",
      "broken",
      "--url",
      "https://b.example/",
      "--body-template",
      "{{ x | nope }}",
    );
    await cli("emit", "item.created", "--data", '{"sku": "A-1", "name": "Bolt"}');
    const ok = await cli("show", "1");
    expect(ok).toContain("  url         https://chat.example/A-1");
    expect(ok).toContain("  header      X-Who: cli");
    expect(ok).toContain('Payload:\n  {\n    "text": "Bolt"\n  }');
    expect(ok).toContain("Template context:");
    const failed = await cli("show", "2");
    expect(failed).toContain("Delivery 2: failed, 1 attempt");
    expect(failed).toContain(
      "its template failed: nothing is sent; fix the template, then retry renders it again",
    );
    expect(failed).not.toContain("Payload:");
    expect(failed).toContain(
      "template_error  Template error in the body: line 1, column 8: unknown filter",
    );
    expect(await cli("retry", "2")).toContain("0");
  });
});

test("a body template or condition over 64 KiB is refused", async () => {
  const long = `{{ event }}${" ".repeat(65_536)}`;
  expect(await refused(...add, "--body-template", long)).toBe(
    "Invalid --body-template: longer than 65536 characters",
  );
});
