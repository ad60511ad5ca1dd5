import { describe, expect, test } from "bun:test";
import { describeNetworkError, describeProxiedError } from "../../lib/http/network-error.ts";

function failure(code: string, message = `${code}: something`) {
  return Object.assign(new TypeError(message), { code });
}

describe("describeNetworkError()", () => {
  test.each([
    ["ECONNREFUSED", "http://127.0.0.1:9000/in", undefined, "connection refused by 127.0.0.1:9000"],
    [
      "ECONNRESET",
      "https://[::1]/x",
      undefined,
      "connection closed by [::1]:443 before it answered",
    ],
    ["ENOTFOUND", "http://nohost.invalid/", undefined, "host not found: nohost.invalid"],
    [
      "EPROTO",
      "https://10.0.0.5:8443/",
      "hooks.example",
      "TLS handshake with 10.0.0.5:8443 (hooks.example) failed: does it speak TLS on this port?",
    ],
    ["EWHATEVER", "http://127.0.0.1:80/", undefined, "EWHATEVER: something (127.0.0.1:80)"],
  ])("%s for %s is %p", (code, url, name, expected) => {
    expect(describeNetworkError(failure(code), url, name)).toBe(expected);
  });

  test("names the destination of a real refused connection instead of Bun's wording", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const port = server.port;
    const url = `http://127.0.0.1:${port}/`;
    await server.stop(true);
    const error = await fetch(url).catch((e: unknown) => e);
    expect(describeNetworkError(error, url)).toBe(`connection refused by 127.0.0.1:${port}`);
  });
});

describe("describeProxiedError()", () => {
  const proxy = "http://relay:***@10.0.0.3:3128";
  test("a connection never made names the proxy; anything else the destination, through it", () => {
    const refused = Object.assign(new Error("Unable to connect"), { code: "ConnectionRefused" });
    expect(describeProxiedError(refused, "https://hooks.example/in", proxy)).toBe(
      "connection refused by the proxy 10.0.0.3:3128, for hooks.example:443",
    );
    const notFound = Object.assign(new Error("getaddrinfo"), { code: "ENOTFOUND" });
    expect(
      describeProxiedError(notFound, "http://hooks.example/in", "http://proxy.corp:3128"),
    ).toBe("the proxy's host not found: proxy.corp, for hooks.example:80");
    const tunnel = new Error("Proxy refused to open a tunnel: 407 Proxy Authentication Required");
    expect(describeProxiedError(tunnel, "https://hooks.example/in", proxy)).toBe(
      `Proxy refused to open a tunnel: 407 Proxy Authentication Required (hooks.example:443), through the proxy ${proxy}`,
    );
  });
});
