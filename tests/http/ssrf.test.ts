import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../lib/config/errors.ts";
import { type AllowList, checkDestination, parseAllowList } from "../../lib/http/ssrf.ts";

const NONE: AllowList = [];

/** IP literals must never reach DNS: this resolver fails the test if it is called. */
function noDns(host: string): Promise<string[]> {
  throw new Error(`resolver called for ${host}`);
}

/** A resolver answering from a fixed table, recording what it was asked. */
function fakeDns(table: Record<string, string[]>) {
  const asked: string[] = [];
  const resolve = async (host: string) => {
    asked.push(host);
    const answer = table[host];
    if (answer === undefined) throw new Error(`getaddrinfo ENOTFOUND ${host}`);
    return answer;
  };
  return { asked, resolve };
}

function check(url: string, allow: AllowList = NONE, resolve = noDns) {
  return checkDestination(url, { allow, resolve });
}

describe("checkDestination() refuses non-global IP literals in every notation", () => {
  const refused: Array<[url: string, shown: string, label: string]> = [
    ["http://127.0.0.1/", "127.0.0.1", "loopback"],
    ["http://127.1/", "127.0.0.1", "loopback"],
    ["http://2130706433/", "127.0.0.1", "loopback"],
    ["http://0x7f.0.0.1/", "127.0.0.1", "loopback"],
    ["http://0x7f000001/", "127.0.0.1", "loopback"],
    ["http://0177.0.0.1/", "127.0.0.1", "loopback"],
    ["http://017700000001/", "127.0.0.1", "loopback"],
    ["http://127.0.0.1./", "127.0.0.1", "loopback"],
    ["http://%31%32%37.0.0.1/", "127.0.0.1", "loopback"],
    ["http://127.255.255.254:8080/path?q=1", "127.255.255.254", "loopback"],
    ["http://[::1]/", "::1", "loopback"],
    ["http://[0:0:0:0:0:0:0:1]/", "::1", "loopback"],
    [
      "http://[::ffff:127.0.0.1]/",
      "::ffff:7f00:1",
      "loopback 127.0.0.1 embedded in IPv4-mapped IPv6",
    ],
    ["http://[::ffff:7f00:1]/", "::ffff:7f00:1", "loopback 127.0.0.1 embedded in IPv4-mapped IPv6"],
    [
      "http://[0:0:0:0:0:ffff:127.0.0.1]/",
      "::ffff:7f00:1",
      "loopback 127.0.0.1 embedded in IPv4-mapped IPv6",
    ],
    ["http://[::127.0.0.1]/", "::7f00:1", "loopback 127.0.0.1 embedded in IPv4-compatible IPv6"],
    [
      "http://[::ffff:0:7f00:1]/",
      "::ffff:0:7f00:1",
      "loopback 127.0.0.1 embedded in IPv4-translated IPv6",
    ],
    ["http://[64:ff9b::7f00:1]/", "64:ff9b::7f00:1", "loopback 127.0.0.1 embedded in NAT64 IPv6"],
    ["http://[64:ff9b::10.0.0.1]/", "64:ff9b::a00:1", "private 10.0.0.1 embedded in NAT64 IPv6"],
    ["http://[64:ff9b:1::1]/", "64:ff9b:1::1", "rfc6052"],
    ["http://[2002:7f00:1::]/", "2002:7f00:1::", "loopback 127.0.0.1 embedded in 6to4 IPv6"],
    ["http://[2002:c0a8:101::1]/", "2002:c0a8:101::1", "private 192.168.1.1 embedded in 6to4 IPv6"],
    // Teredo: server 65.54.227.120 is public, the client (bit-inverted) is 127.0.0.1.
    [
      "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
      "2001:0:4136:e378:8000:63bf:80ff:fffe",
      "loopback 127.0.0.1 embedded in Teredo IPv6",
    ],
    ["http://[2001:0:a00:1::1]/", "2001:0:a00:1::1", "private 10.0.0.1 embedded in Teredo IPv6"],
    ["http://0.0.0.0/", "0.0.0.0", "unspecified"],
    ["http://0/", "0.0.0.0", "unspecified"],
    ["http://[::]/", "::", "unspecified"],
    ["http://10.0.0.1/", "10.0.0.1", "private"],
    ["http://172.16.5.4/", "172.16.5.4", "private"],
    ["http://172.31.255.255/", "172.31.255.255", "private"],
    ["http://192.168.1.1/", "192.168.1.1", "private"],
    ["http://3232235777/", "192.168.1.1", "private"],
    ["http://0xc0.0xa8.1.1/", "192.168.1.1", "private"],
    ["http://169.254.169.254/latest/meta-data/", "169.254.169.254", "linkLocal"],
    ["http://2852039166/", "169.254.169.254", "linkLocal"],
    [
      "http://[::ffff:169.254.169.254]/",
      "::ffff:a9fe:a9fe",
      "linkLocal 169.254.169.254 embedded in IPv4-mapped IPv6",
    ],
    ["http://[fe80::1]/", "fe80::1", "linkLocal"],
    ["http://[febf::1]/", "febf::1", "linkLocal"],
    ["http://100.64.0.1/", "100.64.0.1", "carrierGradeNat"],
    ["http://100.127.255.254/", "100.127.255.254", "carrierGradeNat"],
    ["http://224.0.0.1/", "224.0.0.1", "multicast"],
    ["http://239.255.255.250/", "239.255.255.250", "multicast"],
    ["http://[ff02::1]/", "ff02::1", "multicast"],
    ["http://255.255.255.255/", "255.255.255.255", "broadcast"],
    ["http://240.0.0.1/", "240.0.0.1", "reserved"],
    ["http://192.0.0.8/", "192.0.0.8", "reserved"],
    ["http://192.0.2.1/", "192.0.2.1", "reserved"],
    ["http://198.51.100.7/", "198.51.100.7", "reserved"],
    ["http://203.0.113.9/", "203.0.113.9", "reserved"],
    ["http://198.18.0.1/", "198.18.0.1", "reserved"],
    ["http://[2001:db8::1]/", "2001:db8::1", "reserved"],
    ["http://[3fff::1]/", "3fff::1", "reserved"],
    ["http://[1::1]/", "1::1", "reserved"],
    ["http://[100::1]/", "100::1", "discard"],
    ["http://[fc00::1]/", "fc00::1", "uniqueLocal"],
    ["http://[fd12:3456::1]/", "fd12:3456::1", "uniqueLocal"],
    ["http://[fec0::1]/", "fec0::1", "deprecatedSiteLocal"],
  ];

  for (const [url, shown, label] of refused) {
    test(`refuses ${url} as ${label}`, async () => {
      const result = await check(url);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.reason).toStartWith(`refused ${shown} (${label}): set WEBHOOK_ALLOWED_HOSTS=`);
      expect(result.reason).toEndWith(" to allow it");
    });
  }

  test("refuses IPv4-compatible IPv6 even around a public address", async () => {
    expect(await check("http://[::93.184.216.34]/")).toEqual({
      ok: false,
      reason:
        "refused ::5db8:d822 (IPv4-compatible IPv6, deprecated): set WEBHOOK_ALLOWED_HOSTS=[::5db8:d822]:80 to allow it",
      refused: {
        what: "::5db8:d822",
        label: "IPv4-compatible IPv6, deprecated",
        allowWith: "[::5db8:d822]:80",
      },
    });
  });

  test("suggests the exact host:port to allow, with brackets for IPv6 and the default port", async () => {
    expect(await check("http://127.0.0.1:9000/hook")).toEqual({
      ok: false,
      reason: "refused 127.0.0.1 (loopback): set WEBHOOK_ALLOWED_HOSTS=127.0.0.1:9000 to allow it",
      refused: { what: "127.0.0.1", label: "loopback", allowWith: "127.0.0.1:9000" },
    });
    expect(await check("https://[::1]/")).toEqual({
      ok: false,
      reason: "refused ::1 (loopback): set WEBHOOK_ALLOWED_HOSTS=[::1]:443 to allow it",
      refused: { what: "::1", label: "loopback", allowWith: "[::1]:443" },
    });
  });
});

describe("checkDestination() lets global addresses through", () => {
  const allowed: Array<[url: string, address: string]> = [
    ["http://93.184.216.34/", "93.184.216.34"],
    ["http://1572395042/", "93.184.216.34"],
    ["https://8.8.8.8:8443/x", "8.8.8.8"],
    ["http://172.32.0.1/", "172.32.0.1"],
    ["http://100.128.0.1/", "100.128.0.1"],
    ["https://[2606:2800:220:1::]/", "2606:2800:220:1::"],
    ["https://[2606:2800:220:1:248:1893:25c8:1946]/", "2606:2800:220:1:248:1893:25c8:1946"],
    ["http://[::ffff:93.184.216.34]/", "::ffff:5db8:d822"],
    ["http://[64:ff9b::93.184.216.34]/", "64:ff9b::5db8:d822"],
    ["http://[2002:5db8:d822::1]/", "2002:5db8:d822::1"],
    ["http://[2001:0:4136:e378:8000:63bf:a247:27dd]/", "2001:0:4136:e378:8000:63bf:a247:27dd"],
  ];

  for (const [url, address] of allowed) {
    test(`allows ${url}`, async () => {
      expect(await check(url)).toEqual({ ok: true, addresses: [address] });
    });
  }
});

describe("checkDestination() with host names", () => {
  test("refuses a name that resolves to a private address, naming the host and address", async () => {
    const dns = fakeDns({ "hooks.internal.example": ["10.1.2.3"] });
    expect(await check("https://hooks.internal.example/in", NONE, dns.resolve)).toEqual({
      ok: false,
      reason:
        "refused hooks.internal.example, which resolves to 10.1.2.3 (private): set WEBHOOK_ALLOWED_HOSTS=hooks.internal.example:443 to allow it",
      refused: {
        what: "hooks.internal.example, which resolves to 10.1.2.3",
        label: "private",
        allowWith: "hooks.internal.example:443",
      },
    });
  });

  test("refuses when any one of several answers is forbidden (DNS rebinding)", async () => {
    const first = fakeDns({ "mixed.example": ["93.184.216.34", "127.0.0.1"] });
    const last = fakeDns({ "mixed.example": ["::1", "2606:2800:220:1::"] });
    const a = await check("http://mixed.example/", NONE, first.resolve);
    const b = await check("http://mixed.example/", NONE, last.resolve);
    expect(a.ok || a.reason).toStartWith("refused mixed.example, which resolves to 127.0.0.1");
    expect(b.ok || b.reason).toStartWith("refused mixed.example, which resolves to ::1");
  });

  test("returns every address when all answers are global", async () => {
    const dns = fakeDns({ "example.com": ["93.184.216.34", "2606:2800:220:1::"] });
    expect(await check("https://example.com/", NONE, dns.resolve)).toEqual({
      ok: true,
      addresses: ["93.184.216.34", "2606:2800:220:1::"],
    });
  });

  test("reads resolver answers in any notation and refuses the hidden loopback", async () => {
    for (const answer of ["0x7f.1", "2130706433", "::ffff:127.0.0.1", "fe80::1%eth0"]) {
      const dns = fakeDns({ "odd.example": [answer] });
      const result = await check("http://odd.example/", NONE, dns.resolve);
      expect(result.ok).toBe(false);
    }
  });

  test("asks the resolver for the normalised host name", async () => {
    const dns = fakeDns({ "hooks.example.com": ["93.184.216.34"] });
    expect((await check("http://Hooks.Example.COM./x", NONE, dns.resolve)).ok).toBe(true);
    expect(dns.asked).toEqual(["hooks.example.com"]);
  });

  test("turns resolver failures, empty answers and garbage into 'could not resolve'", async () => {
    const dns = fakeDns({ "empty.example": [], "junk.example": ["not-an-ip"] });
    expect(await check("http://missing.example/", NONE, dns.resolve)).toEqual({
      ok: false,
      reason: "could not resolve missing.example: getaddrinfo ENOTFOUND missing.example",
    });
    expect(await check("http://empty.example/", NONE, dns.resolve)).toEqual({
      ok: false,
      reason: "could not resolve empty.example: no addresses",
    });
    expect(await check("http://junk.example/", NONE, dns.resolve)).toEqual({
      ok: false,
      reason: 'could not resolve junk.example: the resolver returned "not-an-ip", not an address',
    });
  });

  test("uses the system resolver by default: localhost is refused as loopback", async () => {
    const result = await checkDestination("http://localhost:9000/", { allow: NONE });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toMatch(
      /^refused localhost, which resolves to (127\.0\.0\.1|::1) \(loopback\): set WEBHOOK_ALLOWED_HOSTS=localhost:9000 to allow it$/,
    );
    const allowed = await checkDestination("http://localhost:9000/", {
      allow: parseAllowList("localhost:9000"),
    });
    expect(allowed.ok).toBe(true);
  });
});

describe("checkDestination() refuses what is not an http(s) URL", () => {
  test("refuses other schemes", async () => {
    for (const [url, scheme] of [
      ["ftp://93.184.216.34/", "ftp:"],
      ["file:///etc/passwd", "file:"],
      ["gopher://127.0.0.1:6379/_INFO", "gopher:"],
    ] as const) {
      expect(await check(url)).toEqual({
        ok: false,
        reason: `refused ${scheme} URL: only http and https are allowed`,
      });
    }
  });

  test("refuses an unparsable URL and accepts a URL object", async () => {
    expect(await check("not a url")).toEqual({
      ok: false,
      reason: "invalid URL: expected an http:// or https:// URL",
    });
    expect(await checkDestination(new URL("http://0x7f.1/"), { allow: NONE })).toMatchObject({
      ok: false,
    });
  });
});

describe("WEBHOOK_ALLOWED_HOSTS", () => {
  test("parseAllowList() treats unset and empty as allowing nothing", () => {
    expect(parseAllowList(undefined)).toEqual([]);
    expect(parseAllowList("")).toEqual([]);
    expect(parseAllowList(" , ")).toEqual([]);
  });

  test("a host entry allows that name on any port, case-insensitively", async () => {
    const allow = parseAllowList("LocalHost");
    const dns = fakeDns({ localhost: ["127.0.0.1", "::1"] });
    expect(await check("http://localhost:1234/", allow, dns.resolve)).toEqual({
      ok: true,
      addresses: ["127.0.0.1", "::1"],
    });
    expect((await check("http://LOCALHOST.:80/", allow, dns.resolve)).ok).toBe(true);
    // A name entry says nothing about the addresses themselves.
    expect((await check("http://127.0.0.1:1234/", allow)).ok).toBe(false);
  });

  test("a host:port entry allows that name on that port only, default ports implied", async () => {
    const dns = fakeDns({ "hooks.lan": ["192.168.0.10"] });
    const allow = parseAllowList("hooks.lan:9000, hooks.lan:443");
    expect((await check("http://hooks.lan:9000/x", allow, dns.resolve)).ok).toBe(true);
    expect((await check("https://hooks.lan/x", allow, dns.resolve)).ok).toBe(true);
    expect((await check("http://hooks.lan:9001/x", allow, dns.resolve)).ok).toBe(false);
    expect((await check("http://hooks.lan/x", allow, dns.resolve)).ok).toBe(false);
    expect(
      (await check("http://hooks.lan:80/", parseAllowList("hooks.lan:80"), dns.resolve)).ok,
    ).toBe(true);
  });

  test("an IP:port entry allows that address on that port, whatever the notation", async () => {
    const allow = parseAllowList("127.0.0.1:9000");
    for (const url of [
      "http://127.0.0.1:9000/",
      "http://2130706433:9000/",
      "http://127.1:9000/",
      "http://[::ffff:127.0.0.1]:9000/",
    ]) {
      expect(await check(url, allow)).toMatchObject({ ok: true });
    }
    expect((await check("http://127.0.0.1:9001/", allow)).ok).toBe(false);
    expect((await check("http://127.0.0.2:9000/", allow)).ok).toBe(false);
    // A name resolving to that address is allowed only when every answer is.
    const v4 = fakeDns({ localhost: ["127.0.0.1"] });
    const both = fakeDns({ localhost: ["127.0.0.1", "::1"] });
    expect((await check("http://localhost:9000/", allow, v4.resolve)).ok).toBe(true);
    expect((await check("http://localhost:9000/", allow, both.resolve)).ok).toBe(false);
  });

  test("a bracketed [IPv6]:port entry allows that address on that port", async () => {
    const allow = parseAllowList("[::1]:9000");
    expect((await check("http://[::1]:9000/", allow)).ok).toBe(true);
    expect((await check("http://[::1]:9001/", allow)).ok).toBe(false);
  });

  test("a CIDR or bare IP entry allows resolved addresses inside it on any port", async () => {
    const allow = parseAllowList("10.0.0.0/8, ::1/128, 169.254.169.253");
    expect(await check("http://10.9.8.7:81/", allow)).toEqual({
      ok: true,
      addresses: ["10.9.8.7"],
    });
    expect((await check("http://[::1]:9000/", allow)).ok).toBe(true);
    expect((await check("http://169.254.169.253/", allow)).ok).toBe(true);
    expect((await check("http://169.254.169.254/", allow)).ok).toBe(false);
    expect((await check("http://172.16.0.1/", allow)).ok).toBe(false);
    expect((await check("http://127.0.0.1/", allow)).ok).toBe(false);
    const dns = fakeDns({ "db.lan": ["10.0.0.5"] });
    expect((await check("http://db.lan/", allow, dns.resolve)).ok).toBe(true);
    expect((await check("http://127.0.0.1/", parseAllowList("127.0.0.1/32"))).ok).toBe(true);
  });

  test("the value a refusal suggests does allow the request", async () => {
    const dns = fakeDns({ "hooks.lan": ["192.168.0.10"] });
    for (const url of ["http://127.0.0.1:9000/", "https://[::ffff:7f00:1]/", "http://hooks.lan/"]) {
      const refused = await check(url, NONE, dns.resolve);
      const value = refused.ok
        ? ""
        : (/WEBHOOK_ALLOWED_HOSTS=(\S+)/.exec(refused.reason)?.[1] ?? "");
      expect(value).not.toBe("");
      expect((await check(url, parseAllowList(value), dns.resolve)).ok).toBe(true);
    }
  });

  test("parseAllowList() throws a one-line ConfigError naming the variable for a bad entry", () => {
    const bad = [
      "http://localhost:9000",
      "localhost:0",
      "localhost:65536",
      "localhost:",
      ":9000",
      "10.0.0.0/33",
      "10.0.0/8",
      "127.1",
      "0x7f.0.0.1",
      "2130706433",
      "foo bar",
      "*.example.com",
      "fe80::1%eth0",
      "[::1]:",
      "::1:9000:",
      "10.0.0.0/8:80",
      "-bad.example",
      "a..b",
      "user@host",
      "bad\u001b[2Jentry",
    ];
    for (const entry of bad) {
      let error: unknown;
      try {
        parseAllowList(`localhost:9000,${entry}`);
      } catch (caught) {
        error = caught;
      }
      expect(error, entry).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      expect(message).toStartWith("WEBHOOK_ALLOWED_HOSTS entry ");
      expect(message).toEndWith(
        "is invalid: expected a host, host:port or CIDR, e.g. localhost:9000 or 10.0.0.0/8",
      );
      expect(message.includes("\n") || message.includes("\u001b")).toBe(false);
    }
  });

  test("parseAllowList() accepts names, IPs, IPv6 and IDNs", () => {
    expect(
      parseAllowList(
        "localhost, hooks.example.com:8443, 127.0.0.1, ::1, [::1]:9000, 10.0.0.0/8, fd00::/8, bücher.example",
      ),
    ).toHaveLength(8);
  });

  test("an IDN host entry matches the URL's punycode host", async () => {
    const dns = fakeDns({ "xn--bcher-kva.example": ["10.0.0.7"] });
    const allow = parseAllowList("Bücher.example:80");
    expect((await check("http://bücher.example/", allow, dns.resolve)).ok).toBe(true);
    expect((await check("http://bücher.example/", NONE, dns.resolve)).ok).toBe(false);
  });
});

describe("checkDestination() refuses the machine's own addresses", () => {
  // A host with a global address on eth0, as a cloud VM has: a service bound to 0.0.0.0 on it
  // answers there too, so that address is as internal as 127.0.0.1.
  const interfaces = () => ({
    lo: [iface("127.0.0.1", "IPv4", true), iface("::1", "IPv6", true)],
    eth0: [iface("203.0.113.9", "IPv4"), iface("2001:db8:0:1::9", "IPv6")],
    wlan0: [iface("93.184.216.34", "IPv4"), iface("2a00:1450:4001:81c::200e%wlan0", "IPv6")],
  });

  function ownCheck(url: string, allow: AllowList = NONE, resolve = noDns) {
    return checkDestination(url, { allow, resolve, interfaces });
  }

  test("refuses an own global address as a literal, through a name, and IPv4-mapped", async () => {
    const dns = fakeDns({ "me.example": ["93.184.216.34"] });
    expect(await ownCheck("http://93.184.216.34:8080/")).toEqual({
      ok: false,
      reason:
        "refused 93.184.216.34 (this machine's own address): set WEBHOOK_ALLOWED_HOSTS=93.184.216.34:8080 to allow it",
      refused: {
        what: "93.184.216.34",
        label: "this machine's own address",
        allowWith: "93.184.216.34:8080",
      },
    });
    expect(await ownCheck("http://me.example/", NONE, dns.resolve)).toEqual({
      ok: false,
      reason:
        "refused me.example, which resolves to 93.184.216.34 (this machine's own address): set WEBHOOK_ALLOWED_HOSTS=me.example:80 to allow it",
      refused: {
        what: "me.example, which resolves to 93.184.216.34",
        label: "this machine's own address",
        allowWith: "me.example:80",
      },
    });
    expect((await ownCheck("http://[::ffff:93.184.216.34]/")).ok).toBe(false);
    expect((await ownCheck("http://[2a00:1450:4001:81c::200e]/")).ok).toBe(false);
  });

  test("passes other global addresses, and an own one that WEBHOOK_ALLOWED_HOSTS allows", async () => {
    expect(await ownCheck("http://93.184.216.35/")).toEqual({
      ok: true,
      addresses: ["93.184.216.35"],
    });
    const allow = parseAllowList("93.184.216.34:8080");
    expect((await ownCheck("http://93.184.216.34:8080/", allow)).ok).toBe(true);
    expect((await ownCheck("http://93.184.216.34:8081/", allow)).ok).toBe(false);
  });

  test("reads the interfaces again on every check", async () => {
    let list: Array<ReturnType<typeof iface>> = [];
    const changing = () => ({ eth0: list });
    const url = "http://93.184.216.34/";
    expect((await checkDestination(url, { allow: NONE, interfaces: changing })).ok).toBe(true);
    list = [iface("93.184.216.34", "IPv4")];
    expect((await checkDestination(url, { allow: NONE, interfaces: changing })).ok).toBe(false);
  });
});

function iface(address: string, family: "IPv4" | "IPv6", internal = false) {
  const common = { address, netmask: "", mac: "00:00:00:00:00:00", internal, cidr: null };
  return family === "IPv4" ? { ...common, family } : { ...common, family, scopeid: 0 };
}
