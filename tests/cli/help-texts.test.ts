import { describe, expect, test } from "bun:test";
import type { CommandDef } from "citty";
import { createAppCommand } from "../../lib/app/command.ts";
import { renderHelp, resolveForHelp } from "../../lib/cli/help.ts";
import { createDemoCommand } from "../../lib/demo/command.ts";
import { createDigestCommand } from "../../lib/digest/command.ts";
import { loadDigestConfig } from "../../lib/digest/config.ts";
import { createReceiverCommand } from "../../lib/receiver/command.ts";
import { VERSION } from "../../lib/version.ts";
import { createWebhooksCommand } from "../../lib/webhooks-cli/command.ts";
import { createWorkerCommand } from "../../lib/worker/command.ts";
import { configErrorOf } from "../fakes/config-error.ts";

const sink = { write() {}, on() {}, off() {} };
const SCRIPTS: Record<string, CommandDef> = {
  digest: createDigestCommand({ env: {}, stdout: sink, stderr: sink }),
  worker: createWorkerCommand({ env: {} }),
  app: createAppCommand({ env: {} }),
  receiver: createReceiverCommand({ out: sink }),
  demo: createDemoCommand({ print() {} }),
  webhooks: createWebhooksCommand({ env: {}, out() {} }),
};

/** The help `bun run webhooks <args> --help` prints. */
async function webhooksHelp(...args: string[]): Promise<string> {
  const target = await resolveForHelp(SCRIPTS.webhooks as CommandDef, [...args, "--help"]);
  return renderHelp(target.command, { parents: target.parents });
}

describe("help texts say what happens", () => {
  test.each(Object.keys(SCRIPTS))("`%s --help` offers --version beside --help", async (name) => {
    const help = await renderHelp(SCRIPTS[name] as CommandDef);
    expect(help).toStartWith(`${name} ${VERSION}: `);
    expect(help).toMatch(
      /\n {2}-h, --help +show this help\n {2}-v, --version +print the version and exit\n/,
    );
  });

  test("`webhooks update --help` shows no defaults: a flag left out keeps the webhook's value", async () => {
    const update = await webhooksHelp("update");
    expect(update).not.toContain("[default *]");
    expect(update).not.toContain("[default POST]");
    expect(update).not.toContain("[default application/json]");
    expect(update).not.toContain("[default 0]");
    expect(update).not.toContain("generated when left out");
    expect(update).not.toContain("(default");
    expect(update).toContain("Only the fields given change; every other keeps its value.");
    // add still says what it does with what is left out.
    const add = await webhooksHelp("add");
    for (const said of ["[default *]", "[default POST]", "(generated when left out)"]) {
      expect(add).toContain(said);
    }
  });

  test("a bad HN_SEARCH_URL is answered with the search API's own address as the example", () => {
    const message = configErrorOf(() =>
      loadDigestConfig({ HOME: "/home/test", HN_SEARCH_URL: "hn.algolia.com/api/v1" }),
    );
    expect(message).toBe(
      'HN_SEARCH_URL="hn.algolia.com/api/v1" is invalid: expected an http:// or https:// URL, e.g. https://hn.algolia.com/api/v1',
    );
  });
});
