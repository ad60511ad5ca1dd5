import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { httpUrl, intInRange, parseEnv, withoutEmpty } from "../../lib/config/env.ts";
import { configErrorOf } from "../fakes/config-error.ts";

describe("withoutEmpty()", () => {
  test("drops unset, empty and blank values and trims the rest", () => {
    expect(withoutEmpty({ A: "", B: "  ", C: undefined, D: " x " })).toEqual({ D: "x" });
  });
});

describe("intInRange()", () => {
  test("accepts whole numbers in range", () => {
    expect(intInRange(1, 10).parse("7")).toBe(7);
  });

  test.each(["abc", "0", "11", "-3", "2.5", "1e3", ""])("rejects %p", (value) => {
    expect(intInRange(1, 10).safeParse(value).success).toBe(false);
  });
});

describe("httpUrl()", () => {
  test("accepts http and https URLs and drops a trailing slash", () => {
    expect(httpUrl().parse("http://localhost:11434/")).toBe("http://localhost:11434");
    expect(httpUrl().parse("https://hn.algolia.com/api/v1")).toBe("https://hn.algolia.com/api/v1");
  });

  test.each(["localhost:11434", "ftp://x", "//x", "not a url"])("rejects %p", (value) => {
    expect(httpUrl().safeParse(value).success).toBe(false);
  });
});

describe("parseEnv()", () => {
  const schema = z.object({
    MAX: intInRange(1, 1000).default(50),
    URL: httpUrl().default("http://localhost:11434"),
  });

  test("applies defaults for unset and empty variables", () => {
    expect(parseEnv(schema, { MAX: "", OTHER: "ignored" })).toEqual({
      MAX: 50,
      URL: "http://localhost:11434",
    });
  });

  test("throws a one-line ConfigError naming the variable, the value and the expected form", () => {
    const message = configErrorOf(() => parseEnv(schema, { MAX: "abc" }));
    expect(message).toBe('MAX="abc" is invalid: expected a whole number from 1 to 1000');
  });
});

describe("parseEnv() and a URL's credentials", () => {
  test("names a bad URL without its user:password@", () => {
    const schema = z.object({ OLLAMA_ENDPOINT_URL: httpUrl().optional() });
    const message = configErrorOf(() =>
      parseEnv(schema, { OLLAMA_ENDPOINT_URL: "ftp://digest:s3cret@ollama.lan:11434" }),
    );
    expect(message).toBe(
      'OLLAMA_ENDPOINT_URL="ftp://ollama.lan:11434" is invalid: expected an http:// or https:// URL, e.g. http://localhost:11434',
    );
  });
});
