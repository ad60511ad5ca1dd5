import { describe, expect, test } from "bun:test";
import { DNS_TTL_MS } from "../../../lib/http/dns-cache.ts";
import { parseAllowList } from "../../../lib/http/ssrf.ts";
import {
  type CheckMemory,
  checkAndRemember,
  rememberedCheck,
} from "../../../lib/webhooks/sending/check-memory.ts";

const allow = parseAllowList("127.0.0.1");

describe("the worker's remembered destination checks", () => {
  test("an IP literal's check is kept as long as a name's: the machine's own addresses change too", async () => {
    const memory: CheckMemory = new Map();
    const resolve = async () => ["127.0.0.1"];
    await checkAndRemember("http://127.0.0.1:9/in", { allow, resolve, memory }, 0);
    await checkAndRemember("http://hook.test:9/in", { allow, resolve, memory }, 0);
    const later = DNS_TTL_MS;
    expect(rememberedCheck(memory, "http://127.0.0.1:9/in", later - 1)?.check.ok).toBe(true);
    expect(rememberedCheck(memory, "http://127.0.0.1:9/in", later)).toBeUndefined();
    expect(rememberedCheck(memory, "http://hook.test:9/in", later - 1)?.target).toEqual({
      url: "http://127.0.0.1:9/in",
      host: "hook.test:9",
    });
    expect(rememberedCheck(memory, "http://hook.test:9/in", later)).toBeUndefined();
  });

  test("keeps at most 1000 URLs, forgetting the oldest first", async () => {
    const memory: CheckMemory = new Map();
    const url = (n: number) => `http://127.0.0.1:9/in?n=${n}`;
    for (let n = 0; n <= 1000; n++) await checkAndRemember(url(n), { allow, memory }, 0);
    expect(memory.size).toBe(1000);
    expect(rememberedCheck(memory, url(0), 0)).toBeUndefined();
    expect(rememberedCheck(memory, url(1), 0)).toBeDefined();
    expect(rememberedCheck(memory, url(1000), 0)).toBeDefined();
  });
});
