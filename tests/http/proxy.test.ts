import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  fetchThroughProxy,
  loadProxySetting,
  type ProxySetting,
  proxyFor,
} from "../../lib/http/proxy.ts";
import { parseAllowList } from "../../lib/http/ssrf.ts";
import type { Webhook } from "../../lib/webhooks/model.ts";
import { sendAttempt } from "../../lib/webhooks/sending/send.ts";
import { claimFixture } from "../fakes/claim.ts";
import { type ConnectProxy, startConnectProxy } from "../fakes/connect-proxy.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";
import {
  HOOK_TEST_CERT_FILE,
  PROXY_CERT_FILE,
  PROXY_KEY_FILE,
  startTlsHookServer,
} from "../fakes/tls-hook-server.ts";

const USER = "relay";
const PASSWORD = "s3cret:p@ss";
const VARIABLES = { url: "WEBHOOK_PROXY_URL", noProxy: "WEBHOOK_NO_PROXY" };

const makeDir = tempDirs("proxy-");
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The names the worker's resolver (the SSRF guard's) knows; the proxy has its own table. */
const WORKER_DNS: Record<string, string[]> = {
  "hook.test": ["127.0.0.1"],
  "plain.test": ["127.0.0.1"],
  "direct.test": ["127.0.0.1"],
  "proxy.test": ["127.0.0.1"],
  "internal.test": ["10.0.0.5"],
};
const resolve = async (host: string) => WORKER_DNS[host] ?? [];

async function proxy(): Promise<ConnectProxy> {
  const started = await startConnectProxy({
    user: USER,
    password: PASSWORD,
    hosts: { "hook.test": "127.0.0.1", "plain.test": "127.0.0.1" },
  });
  cleanups.push(() => started.stop());
  return started;
}

function setting(url: string, noProxy?: string): ProxySetting {
  const loaded = loadProxySetting({ WEBHOOK_PROXY_URL: url, WEBHOOK_NO_PROXY: noProxy }, VARIABLES);
  if (!loaded) throw new Error("expected a proxy");
  return loaded;
}

/** A plain http receiver on 127.0.0.1 recording each request's Host. */
function plainReceiver() {
  const hosts: Array<string | null> = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      hosts.push(request.headers.get("host"));
      return new Response("ok");
    },
  });
  cleanups.push(() => server.stop(true));
  return { hosts, url: (name: string) => `http://${name}:${server.port}/in` };
}

function claimFor(webhook: Partial<Webhook>) {
  return claimFixture({ id: 7, workerId: "w1", webhook, delivery: { leaseExpiresAt: 0 } });
}

function options(via: ProxySetting, allow = "hook.test,plain.test,direct.test") {
  return { timeoutMs: 5000, allow: parseAllowList(allow), resolve, proxy: via };
}

describe("deliveries through WEBHOOK_PROXY_URL", () => {
  test("an https delivery goes through a CONNECT tunnel by name, with the proxy's credentials, to a TLS receiver", async () => {
    const relay = await proxy();
    const tls = await startTlsHookServer();
    cleanups.push(() => tls.server.stop(true));
    const sent = await sendAttempt(
      claimFor({ url: tls.url("hook.test"), caFile: HOOK_TEST_CERT_FILE }),
      options(setting(relay.url)),
    );
    expect(sent.record).toMatchObject({ outcome: "success", statusCode: 200 });
    // The name reached the proxy, which resolved it; the certificate was checked against it.
    expect(relay.requests).toEqual([
      { method: "CONNECT", target: `hook.test:${tls.server.port}`, authorized: true },
    ]);
    expect(tls.hosts).toEqual([`hook.test:${tls.server.port}`]);
  });

  test("an https proxy: reached over TLS, its certificate checked with the webhook's TLS settings (the CA file must hold its CA too)", async () => {
    const relay = await startConnectProxy({
      user: USER,
      password: PASSWORD,
      hosts: { "hook.test": "127.0.0.1" },
      tls: {
        cert: await Bun.file(PROXY_CERT_FILE).text(),
        key: await Bun.file(PROXY_KEY_FILE).text(),
      },
    });
    cleanups.push(() => relay.stop());
    expect(relay.url).toStartWith("https://");
    const tls = await startTlsHookServer();
    cleanups.push(() => tls.server.stop(true));
    const bundle = join(makeDir(), "cas.pem");
    writeFileSync(
      bundle,
      (await Bun.file(HOOK_TEST_CERT_FILE).text()) + (await Bun.file(PROXY_CERT_FILE).text()),
    );
    const via = options(setting(relay.url));
    const onlyReceiver = await sendAttempt(
      claimFor({ url: tls.url("hook.test"), caFile: HOOK_TEST_CERT_FILE }),
      via,
    );
    expect(onlyReceiver.record.outcome).toBe("network_error");
    expect(relay.requests).toEqual([]);
    const both = await sendAttempt(claimFor({ url: tls.url("hook.test"), caFile: bundle }), via);
    expect(both.record).toMatchObject({ outcome: "success", statusCode: 200 });
    expect(relay.requests).toEqual([
      { method: "CONNECT", target: `hook.test:${tls.server.port}`, authorized: true },
    ]);
    expect(tls.hosts).toEqual([`hook.test:${tls.server.port}`]);
  });

  test("an http delivery goes to the proxy as an absolute URL; the receiver sees its own Host", async () => {
    const relay = await proxy();
    const receiver = plainReceiver();
    const url = receiver.url("plain.test");
    const sent = await sendAttempt(claimFor({ url }), options(setting(relay.url)));
    expect(sent.record).toMatchObject({ outcome: "success", statusCode: 200 });
    expect(relay.requests).toEqual([{ method: "POST", target: url, authorized: true }]);
    expect(receiver.hosts).toEqual([new URL(url).host]);
  });

  test("a proxy refusing the credentials fails the attempt; the password is in no record", async () => {
    const relay = await proxy();
    const tls = await startTlsHookServer();
    cleanups.push(() => tls.server.stop(true));
    const receiver = plainReceiver();
    const attempts = [
      await sendAttempt(
        claimFor({ url: tls.url("hook.test"), caFile: HOOK_TEST_CERT_FILE }),
        options(setting(relay.wrongUrl)),
      ),
      await sendAttempt(
        claimFor({ url: receiver.url("plain.test") }),
        options(setting(relay.wrongUrl)),
      ),
    ];
    for (const { record } of attempts) {
      expect(record.outcome).not.toBe("success");
      expect(JSON.stringify(record)).not.toContain("wrong");
    }
    // https: the tunnel refused; http: the proxy's own 407 answer.
    expect(attempts[0]?.record.error).toBe(
      `Proxy refused to open a tunnel: 407 Proxy Authentication Required (hook.test:${tls.server.port}), through the proxy http://${USER}:***@127.0.0.1:${relay.port}`,
    );
    expect(attempts[1]?.record).toMatchObject({ outcome: "http_error", statusCode: 407 });
    expect(relay.requests.map((r) => r.authorized)).toEqual([false, false]);
    expect(tls.hosts).toEqual([]);
    expect(receiver.hosts).toEqual([]);
  });

  test("the proxy as a destination is refused by the SSRF guard like any loopback address", async () => {
    const relay = await proxy();
    for (const url of [`http://proxy.test:${relay.port}/`, `http://127.0.0.1:${relay.port}/`]) {
      const sent = await sendAttempt(claimFor({ url }), options(setting(relay.url)));
      expect(sent.record.outcome).toBe("blocked");
      expect(sent.record.error).toContain("(loopback): set WEBHOOK_ALLOWED_HOSTS=");
    }
    expect(relay.requests).toEqual([]);
  });

  test("a private destination is refused before anything goes to the proxy", async () => {
    const relay = await proxy();
    const sent = await sendAttempt(
      claimFor({ url: "http://internal.test/admin" }),
      options(setting(relay.url)),
    );
    expect(sent.record).toMatchObject({
      outcome: "blocked",
      error:
        "refused internal.test, which resolves to 10.0.0.5 (private): set WEBHOOK_ALLOWED_HOSTS=internal.test:80 to allow it",
    });
    expect(relay.requests).toEqual([]);
  });

  test("WEBHOOK_NO_PROXY: a listed name (or its address's range) is sent directly, to the checked address", async () => {
    const relay = await proxy();
    const receiver = plainReceiver();
    for (const noProxy of ["direct.test", ".test", "127.0.0.0/8", "*"]) {
      const sent = await sendAttempt(
        claimFor({ url: receiver.url("direct.test") }),
        options(setting(relay.url, noProxy)),
      );
      expect(sent.record).toMatchObject({ outcome: "success", statusCode: 200 });
    }
    expect(relay.requests).toEqual([]);
    expect(receiver.hosts).toHaveLength(4);
    // Not listed: through the proxy (which refuses a name it cannot resolve: 502).
    const other = await sendAttempt(
      claimFor({ url: receiver.url("direct.test") }),
      options(setting(relay.url, "example.com")),
    );
    expect(other.record).toMatchObject({ outcome: "http_error", statusCode: 502 });
    expect(relay.requests).toHaveLength(1);
  });
});

describe("loadProxySetting() and proxyFor()", () => {
  test("the URL keeps its credentials for fetch; messages and logs see the password masked", () => {
    const loaded = setting("http://relay:hunter2@proxy.corp:3128");
    expect(loaded.url).toBe("http://relay:hunter2@proxy.corp:3128");
    expect(loaded.shown).toBe("http://relay:***@proxy.corp:3128");
    expect(() => setting("socks5://relay:hunter2@proxy.corp:1080")).toThrow(
      'WEBHOOK_PROXY_URL="socks5://relay:***@proxy.corp:1080" is invalid: expected an http:// or https:// proxy',
    );
    expect(() => setting("http://relay:hunter2@proxy.corp:3128/path")).toThrow(
      "expected no path, query or fragment after the host and port",
    );
    expect(() => setting("http://proxy.corp", "bad entry!")).toThrow(
      'WEBHOOK_NO_PROXY entry "bad entry!" is invalid',
    );
    expect(loadProxySetting({ WEBHOOK_NO_PROXY: "x.test" }, VARIABLES)).toBeNull();
  });

  test("a proxy URL written without its scheme is refused without repeating its password", () => {
    // As curl and HTTPS_PROXY take it; new URL() reads `relay:` as the scheme, or fails.
    for (const [value, shown] of [
      ["relay:hunter2@proxy.corp:3128", "relay:***@proxy.corp:3128"],
      ["//relay:hunter2@proxy.corp:3128", "//relay:***@proxy.corp:3128"],
      ["http//relay:hunter2@proxy.corp:3128", "http//relay:***@proxy.corp:3128"],
    ] as const) {
      let message = "";
      try {
        setting(value);
      } catch (error) {
        message = String(error);
      }
      expect(message).toContain(`WEBHOOK_PROXY_URL=${JSON.stringify(shown)} is invalid`);
      expect(message).not.toContain("hunter2");
    }
  });

  test("loopback is always direct; names match themselves and what is under them", () => {
    const via = setting("http://proxy.corp:3128", "corp.example,10.0.0.0/8,[fd00::1]");
    const through = (url: string, addresses?: string[]) => proxyFor(via, url, addresses) !== null;
    expect(through("http://localhost:9000/")).toBe(false);
    expect(through("http://127.0.0.1:9000/")).toBe(false);
    expect(through("http://[::1]:9000/")).toBe(false);
    expect(through("https://corp.example/")).toBe(false);
    expect(through("https://hooks.corp.example/")).toBe(false);
    expect(through("https://notcorp.example/")).toBe(true);
    expect(through("https://erp.lan/", ["10.1.2.3"])).toBe(false);
    expect(through("https://[fd00::1]/")).toBe(false);
    expect(through("https://hooks.example/", ["93.184.215.14"])).toBe(true);
  });
});

describe("fetchThroughProxy() (the digest's requests)", () => {
  function capture() {
    const calls: Array<{ url: string; init: RequestInit & { proxy?: string } }> = [];
    const fake = Object.assign(
      async (input: string | URL | Request, init?: RequestInit) => {
        calls.push({ url: String(input), init: init ?? {} });
        return new Response("ok");
      },
      { preconnect: fetch.preconnect },
    ) as typeof fetch;
    return { calls, fake };
  }

  test("a request pinned by the SSRF guard goes to the proxy by its name; loopback and DIGEST_NO_PROXY directly", async () => {
    const { calls, fake } = capture();
    const proxied = fetchThroughProxy(
      fake,
      setting("http://relay:pw@proxy.corp:3128", "10.0.0.0/8"),
    );
    await proxied("http://93.184.215.14/a?b=1", {
      headers: { host: "example.org", accept: "*/*" },
    });
    await proxied("http://10.1.2.3/lan", { headers: { host: "wiki.lan" } });
    await proxied("http://localhost:11434/api/generate", { method: "POST" });
    await proxied("https://hn.algolia.com/api/v1/search");
    const [pinned, lan, local, search] = calls;
    expect(pinned?.url).toBe("http://example.org/a?b=1");
    expect(pinned?.init.proxy).toBe("http://relay:pw@proxy.corp:3128");
    expect(new Headers(pinned?.init.headers).get("host")).toBeNull();
    expect(new Headers(pinned?.init.headers).get("accept")).toBe("*/*");
    expect(lan).toEqual({ url: "http://10.1.2.3/lan", init: { headers: { host: "wiki.lan" } } });
    expect(local?.init.proxy).toBeUndefined();
    expect(search?.init.proxy).toBe("http://relay:pw@proxy.corp:3128");
    expect(fetchThroughProxy(fake, null)).toBe(fake);
  });
});
