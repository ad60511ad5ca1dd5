import { describe, expect, test } from "bun:test";
import { createCachedResolver, DNS_TTL_MS } from "../../lib/http/dns-cache.ts";

/** A resolver that answers from a table, counting the lookups per host. */
function countingResolver(table: Record<string, string[] | Error>) {
  const lookups: string[] = [];
  const resolve = async (host: string) => {
    lookups.push(host);
    const answer = table[host];
    if (answer instanceof Error) throw answer;
    return answer ?? [];
  };
  return { resolve, lookups, table };
}

describe("createCachedResolver()", () => {
  test("answers a host from memory until its time to live has passed, then asks again", async () => {
    const clock = { t: 0 };
    const dns = countingResolver({ "hook.test": ["203.0.113.7"] });
    const resolve = createCachedResolver(dns.resolve, { now: () => clock.t });
    expect(await resolve("hook.test")).toEqual(["203.0.113.7"]);
    clock.t += DNS_TTL_MS - 1;
    expect(await resolve("hook.test")).toEqual(["203.0.113.7"]);
    expect(dns.lookups).toEqual(["hook.test"]);
    // The host moved: seen once the answer is older than its time to live.
    dns.table["hook.test"] = ["203.0.113.8"];
    clock.t += 1;
    expect(await resolve("hook.test")).toEqual(["203.0.113.8"]);
    expect(dns.lookups).toEqual(["hook.test", "hook.test"]);
  });

  test("remembers neither a failure nor an empty answer", async () => {
    const dns = countingResolver({ "down.test": new Error("ENOTFOUND"), "empty.test": [] });
    const resolve = createCachedResolver(dns.resolve, { now: () => 0 });
    await expect(resolve("down.test")).rejects.toThrow("ENOTFOUND");
    await expect(resolve("down.test")).rejects.toThrow("ENOTFOUND");
    expect(await resolve("empty.test")).toEqual([]);
    expect(await resolve("empty.test")).toEqual([]);
    expect(dns.lookups).toEqual(["down.test", "down.test", "empty.test", "empty.test"]);
  });

  test("after a failed lookup of an expired host, the next attempt asks again", async () => {
    const clock = { t: 0 };
    const dns = countingResolver({ "hook.test": ["203.0.113.7"] });
    const resolve = createCachedResolver(dns.resolve, { now: () => clock.t });
    await resolve("hook.test");
    clock.t += DNS_TTL_MS;
    dns.table["hook.test"] = new Error("SERVFAIL");
    await expect(resolve("hook.test")).rejects.toThrow("SERVFAIL");
    dns.table["hook.test"] = ["203.0.113.9"];
    expect(await resolve("hook.test")).toEqual(["203.0.113.9"]);
  });

  test("keeps at most maxHosts answers, forgetting the oldest first", async () => {
    const dns = countingResolver({
      "a.test": ["1.1.1.1"],
      "b.test": ["2.2.2.2"],
      "c.test": ["3.3.3.3"],
    });
    const resolve = createCachedResolver(dns.resolve, { now: () => 0, maxHosts: 2 });
    for (const host of ["a.test", "b.test", "c.test", "c.test", "b.test", "a.test"]) {
      await resolve(host);
    }
    // a.test was forgotten for c.test; b.test and c.test stayed.
    expect(dns.lookups).toEqual(["a.test", "b.test", "c.test", "a.test"]);
  });
});
