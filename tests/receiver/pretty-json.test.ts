import { describe, expect, test } from "bun:test";
import { prettyJson } from "../../lib/receiver/pretty-json.ts";

describe("prettyJson()", () => {
  test("indents like JSON.stringify(value, null, 2)", () => {
    const samples = [
      '{"event":"created","timestamp":"2021-03-09 17:55:33.968016+00:00","model":"site"}',
      '{"data": {"id": 19, "tags": [], "nested": [[1, 2], {"a": {}}]}, "snapshots": {"prechange": null}}',
      '[ 1 , "two" , true , false , null , -1.5 ]',
      '"just a string"',
      "42",
      "{}",
      "  [ ]  ",
      '{"quote \\" and brace {": "value with , and : and ]"}',
    ];
    for (const sample of samples) {
      expect(prettyJson(sample)).toBe(JSON.stringify(JSON.parse(sample), null, 2));
    }
  });

  test("keeps numbers and string escapes exactly as written", () => {
    expect(prettyJson('{"id":12345678901234567890,"e":"\\u001b","f":1.10}')).toBe(
      '{\n  "id": 12345678901234567890,\n  "e": "\\u001b",\n  "f": 1.10\n}',
    );
  });

  test("returns null for text that is not JSON", () => {
    expect(prettyJson("a=1&b=2")).toBeNull();
    expect(prettyJson('{"cut": "off')).toBeNull();
    expect(prettyJson("")).toBeNull();
  });
});
