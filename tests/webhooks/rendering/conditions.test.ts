import { describe, expect, test } from "bun:test";
import type { ConditionNode, ConditionSet } from "../../../lib/webhooks/model.ts";
import {
  compileRegex,
  MAX_REGEX_PROGRAM_SIZE,
} from "../../../lib/webhooks/rendering/condition-regex.ts";
import {
  ConditionError,
  checkConditionSet,
  conditionsMatch,
  explainConditions,
  parseConditionText,
  UnrunnableRegexError,
} from "../../../lib/webhooks/rendering/conditions.ts";

const item = {
  id: 7,
  sku: "A-1",
  name: "Widget mk2",
  quantity: 3,
  price: 2.5,
  active: true,
  location: null,
  status: { value: "active", label: "Active" },
  tags: [{ name: "red" }, { name: "blue" }],
  codes: ["x", "y"],
};

const all = (...nodes: ConditionNode[]): ConditionSet => ({ and: nodes });

describe("conditionsMatch()", () => {
  const cases: Array<[string, ConditionNode, boolean]> = [
    ["eq (the default) on a string", { attr: "sku", value: "A-1" }, true],
    ["eq on a different string", { attr: "sku", value: "B-2" }, false],
    ["eq on a nested path", { attr: "status.value", value: "active" }, true],
    ["eq on a number", { attr: "quantity", value: 3, op: "eq" }, true],
    ["eq on a boolean", { attr: "active", value: true }, true],
    ["eq on null", { attr: "location", value: null }, true],
    ["eq on a list", { attr: "codes", value: ["x", "y"] }, true],
    ["eq compares types (3 is not '3')", { attr: "quantity", value: "3" }, false],
    ["gt", { attr: "quantity", value: 2, op: "gt" }, true],
    ["gt at the boundary", { attr: "quantity", value: 3, op: "gt" }, false],
    ["gte at the boundary", { attr: "quantity", value: 3, op: "gte" }, true],
    ["lt", { attr: "price", value: 3, op: "lt" }, true],
    ["lt at the boundary", { attr: "quantity", value: 3, op: "lt" }, false],
    ["lte at the boundary", { attr: "quantity", value: 3, op: "lte" }, true],
    ["in a list", { attr: "status.value", value: ["planned", "active"], op: "in" }, true],
    ["not in a list", { attr: "status.value", value: ["planned"], op: "in" }, false],
    ["contains in a string", { attr: "name", value: "mk", op: "contains" }, true],
    ["contains not in a string", { attr: "name", value: "MK", op: "contains" }, false],
    ["contains in a list", { attr: "codes", value: "y", op: "contains" }, true],
    [
      "contains through a list of objects",
      { attr: "tags.name", value: "blue", op: "contains" },
      true,
    ],
    ["contains a key of an object", { attr: "status", value: "label", op: "contains" }, true],
    ["regex matches from the start", { attr: "sku", value: "A-\\d", op: "regex" }, true],
    [
      "regex is anchored at the start (re.match)",
      { attr: "sku", value: "\\d", op: "regex" },
      false,
    ],
    ["negate inverts a match", { attr: "sku", value: "A-1", negate: true }, false],
    ["negate inverts a miss", { attr: "sku", value: "B-2", negate: true }, true],
    ["a missing attribute does not match", { attr: "colour", value: "red" }, false],
    [
      "a missing attribute does not match negated",
      { attr: "colour", value: "red", negate: true },
      false,
    ],
    ["a path through a scalar is missing", { attr: "sku.value", value: "A-1" }, false],
    ["type mismatch: gt on a string", { attr: "sku", value: 1, op: "gt" }, false],
    [
      "type mismatch does not match negated",
      { attr: "sku", value: 1, op: "gt", negate: true },
      false,
    ],
    [
      "type mismatch: contains a number in a string",
      { attr: "name", value: 2, op: "contains" },
      false,
    ],
    ["type mismatch: regex on a number", { attr: "quantity", value: "3", op: "regex" }, false],
    ["type mismatch: gt on a boolean", { attr: "active", value: 0, op: "gt" }, false],
  ];
  for (const [name, node, expected] of cases) {
    test(`${name} → ${expected}`, () => {
      expect(conditionsMatch(all(node), item)).toBe(expected);
    });
  }

  test("and needs every condition, or any one", () => {
    const yes = { attr: "sku", value: "A-1" };
    const no = { attr: "sku", value: "B-2" };
    expect(conditionsMatch({ and: [yes, yes] }, item)).toBe(true);
    expect(conditionsMatch({ and: [yes, no] }, item)).toBe(false);
    expect(conditionsMatch({ or: [no, yes] }, item)).toBe(true);
    expect(conditionsMatch({ or: [no, no] }, item)).toBe(false);
  });

  test("nested sets combine (and of or)", () => {
    const set: ConditionSet = {
      and: [
        { attr: "status.value", value: "active" },
        {
          or: [
            { attr: "quantity", value: 10, op: "gt" },
            { attr: "codes", value: "x", op: "contains" },
          ],
        },
      ],
    };
    expect(conditionsMatch(set, item)).toBe(true);
    expect(conditionsMatch(set, { ...item, codes: [] })).toBe(false);
  });

  test("a malformed set stored without checks matches nothing instead of throwing", () => {
    const bad = { and: "quantity" } as unknown as ConditionSet;
    expect(conditionsMatch(bad, item)).toBe(false);
  });

  test("a regex that cannot run (stored without checks) throws, never a silent no match", () => {
    const badRegex = all({ attr: "sku", value: "(?<=A)-1", op: "regex" });
    expect(() => conditionsMatch(badRegex, item)).toThrow(UnrunnableRegexError);
    expect(() => conditionsMatch(badRegex, item)).toThrow(
      'the regex "(?<=A)-1" cannot run: error parsing regexp: invalid named capture: `(?<=A)-1`',
    );
  });

  test("a regex over the size cap stored before the cap throws instead of running", () => {
    const big = "((a|b){1,30}){1,30}((a|b){1,30}){1,30}";
    const stored = all({ attr: "name", value: big, op: "regex" });
    expect(() => conditionsMatch(stored, { name: "ab".repeat(500) })).toThrow(UnrunnableRegexError);
    expect(() => conditionsMatch(stored, item)).toThrow(
      `the regex "${big}" cannot run: the regex compiles to 7,320 instructions: at most 5,000`,
    );
  });

  test("a set of more than 16 regexes stored before the cap throws before any runs", () => {
    const many = {
      or: Array.from({ length: 20 }, () => ({ attr: "sku", value: "A", op: "regex" })),
    };
    expect(() => conditionsMatch(many as ConditionSet, item)).toThrow(
      "the conditions cannot run: the set holds 20 regex conditions: at most 16, nested sets included",
    );
    expect(conditionsMatch({ or: many.or.slice(0, 16) } as ConditionSet, item)).toBe(true);
  });

  test("a pattern that backtracks exponentially elsewhere runs in linear time", () => {
    // JavaScript's engine took 2.5 s for 28 characters here; 100,000 would never end.
    const backtracking = all({ attr: "name", value: "(a+)+$", op: "regex" });
    const started = performance.now();
    expect(conditionsMatch(backtracking, { name: `${"a".repeat(100_000)}!` })).toBe(false);
    expect(conditionsMatch(backtracking, { name: "a".repeat(28) })).toBe(true);
    // A bound far below the damage, generous for a loaded 2-core machine.
    expect(performance.now() - started).toBeLessThan(5000);
  });

  test("empty and matches, empty or does not (Python's all/any)", () => {
    expect(conditionsMatch({ and: [] }, item)).toBe(true);
    expect(conditionsMatch({ or: [] }, item)).toBe(false);
  });
});

describe("checkConditionSet()", () => {
  const refused: Array<[string, unknown, string]> = [
    ["a bare condition at the top", { attr: "sku", value: "A" }, "$: expected a set"],
    ["two logic keys", { and: [], or: [] }, "$: expected a set: an object with exactly one key"],
    ["a list at the top", [], "$: expected a set"],
    ["a non-list under and", { and: { attr: "x", value: 1 } }, "$.and: expected a list"],
    [
      "an unknown operator",
      { and: [{ attr: "x", value: 1, op: "like" }] },
      '$.and[0].op: unknown operator "like"',
    ],
    [
      "an operator that does not apply to the value",
      { or: [{ attr: "x", value: "a", op: "gt" }] },
      "$.or[0].op: gt does not apply to a string value",
    ],
    [
      "in without a list",
      { and: [{ attr: "x", value: 1, op: "in" }] },
      "$.and[0].op: in does not apply",
    ],
    [
      "a bad regex",
      { and: [{ attr: "x", value: "(", op: "regex" }] },
      "$.and[0].value: invalid regex for RE2's syntax",
    ],
    [
      "a lookbehind, which a linear-time engine cannot run",
      { and: [{ attr: "x", value: "(?<=a)b", op: "regex" }] },
      "$.and[0].value: invalid regex for RE2's syntax (error parsing regexp",
    ],
    [
      "a backreference",
      { and: [{ attr: "x", value: "(a)\\1", op: "regex" }] },
      "$.and[0].value: invalid regex for RE2's syntax (error parsing regexp: invalid escape",
    ],
    ["a missing value", { and: [{ attr: "x" }] }, "$.and[0].value: missing"],
    ["an empty attr part", { and: [{ attr: "a..b", value: 1 }] }, "$.and[0].attr"],
    [
      "an unknown key",
      { and: [{ attr: "x", value: 1, negated: true }] },
      "$.and[0].negated: unknown key",
    ],
    ["a non-boolean negate", { and: [{ attr: "x", value: 1, negate: "yes" }] }, "$.and[0].negate"],
    [
      "an object value",
      { and: [{ attr: "x", value: { a: 1 } }] },
      "$.and[0].value: expected a string",
    ],
    [
      "a bad node deep inside",
      {
        and: [
          { attr: "x", value: 1 },
          {
            or: [
              { attr: "y", value: 2 },
              { attr: "z", value: 3, op: "nope" },
            ],
          },
        ],
      },
      "$.and[1].or[1].op: unknown operator",
    ],
  ];
  for (const [name, value, message] of refused) {
    test(`refuses ${name} with the path of the bad node`, () => {
      let error: unknown;
      try {
        checkConditionSet(value);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConditionError);
      expect((error as Error).message).toStartWith(message);
    });
  }

  test("refuses a regex whose compiled program is over the cap, with its size and the path", () => {
    // ((a|b){1,30}){1,30} compiles to 3,661 instructions; two of them in a row to about twice that.
    const big = "((a|b){1,30}){1,30}((a|b){1,30}){1,30}";
    const set = {
      and: [
        { attr: "sku", value: "A-1" },
        { attr: "name", value: big, op: "regex" },
      ],
    };
    expect(() => checkConditionSet(set)).toThrow(
      "$.and[1].value: the regex compiles to 7,320 instructions: at most 5,000 (nested counted repetitions such as (a{1,30}){1,30} multiply)",
    );
  });

  test("accepts a regex just under the cap and one as large as the cap allows", () => {
    expect(compileRegex("((a|b){1,30}){1,30}").programSize).toBe(3661);
    expect(compileRegex("(.?){1,999}").programSize).toBeLessThanOrEqual(MAX_REGEX_PROGRAM_SIZE);
    const set = all(
      { attr: "name", value: "((a|b){1,30}){1,30}", op: "regex" },
      { attr: "name", value: "(.?){1,999}", op: "regex" },
    );
    expect(checkConditionSet(set)).toEqual(set);
  });

  test("refuses a 17th regex condition, nested sets counted, at the 17th's path", () => {
    const regex = (i: number): ConditionNode => ({ attr: "sku", value: `A-${i}`, op: "regex" });
    const sixteen = Array.from({ length: 16 }, (_, i) => regex(i));
    expect(checkConditionSet({ or: sixteen })).toEqual({ or: sixteen });
    const nested = { or: [...sixteen.slice(0, 10), { and: sixteen.slice(10) }, regex(16)] };
    expect(() => checkConditionSet(nested)).toThrow(
      "$.or[11].op: regex condition number 17: a set holds at most 16, nested sets included",
    );
    // Conditions of other operators do not count.
    const mixed = { and: [...sixteen, { attr: "sku", value: "A", op: "contains" as const }] };
    expect(checkConditionSet(mixed)).toEqual(mixed);
  });

  test("accepts NetBox's documented example", () => {
    const set = { and: [{ attr: "status.value", value: "active" }] };
    expect(checkConditionSet(set)).toEqual(set);
  });

  test("parseConditionText() refuses text that is not JSON at $", () => {
    expect(() => parseConditionText("{and: []}")).toThrow(/^\$: not valid JSON/);
  });
});

describe("conditionsMatch() on prechange. and postchange.", () => {
  const before = { id: 7, quantity: 6, sku: "A-1" };
  const after = { id: 7, quantity: 3, sku: "A-1" };
  const fellBelow5 = all(
    { attr: "prechange.quantity", op: "gte", value: 5 },
    { attr: "quantity", op: "lt", value: 5 },
  );

  test("an update reads the object before the change under prechange.", () => {
    expect(conditionsMatch(fellBelow5, after, { prechange: before, postchange: after })).toBe(true);
    const stillLow = { prechange: { ...before, quantity: 4 }, postchange: after };
    expect(conditionsMatch(fellBelow5, after, stillLow)).toBe(false);
  });

  test("postchange. reads the object after the change; the plain name is the same value", () => {
    const snapshots = { prechange: before, postchange: after };
    expect(conditionsMatch(all({ attr: "postchange.quantity", value: 3 }), after, snapshots)).toBe(
      true,
    );
    expect(conditionsMatch(all({ attr: "quantity", value: 3 }), after, snapshots)).toBe(true);
    expect(conditionsMatch(all({ attr: "postchange.quantity", value: 6 }), after, snapshots)).toBe(
      false,
    );
  });

  test("on a creation a prechange. attribute is absent: false, negated or not", () => {
    const created = { prechange: null, postchange: after };
    expect(conditionsMatch(fellBelow5, after, created)).toBe(false);
    const negated = all({ attr: "prechange.quantity", value: 1, negate: true });
    expect(conditionsMatch(negated, after, created)).toBe(false);
    expect(conditionsMatch(negated, after, { prechange: before, postchange: after })).toBe(true);
  });

  test("on a deletion a postchange. attribute is absent; prechange. is the last state", () => {
    const deleted = { prechange: before, postchange: null };
    expect(
      conditionsMatch(all({ attr: "postchange.quantity", op: "gte", value: 0 }), before, deleted),
    ).toBe(false);
    expect(conditionsMatch(all({ attr: "prechange.quantity", value: 6 }), before, deleted)).toBe(
      true,
    );
  });

  test("without snapshots (an older caller) both prefixes are absent", () => {
    expect(conditionsMatch(all({ attr: "prechange.quantity", value: 6 }), after)).toBe(false);
  });
});

describe("explainConditions()", () => {
  test("lists each condition with its path, the value it saw (or absent) and its result", () => {
    const set: ConditionSet = {
      and: [
        { attr: "prechange.quantity", op: "gte", value: 5 },
        {
          or: [
            { attr: "quantity", op: "lt", value: 5 },
            { attr: "colour", value: "red" },
          ],
        },
      ],
    };
    const rows = explainConditions(set, { quantity: 3 }, { prechange: null, postchange: {} });
    expect(
      rows.map(({ path, found, actual, result }) => ({ path, found, actual, result })),
    ).toEqual([
      { path: "$.and[0]", found: false, actual: undefined, result: false },
      { path: "$.and[1].or[0]", found: true, actual: 3, result: true },
      { path: "$.and[1].or[1]", found: false, actual: undefined, result: false },
    ]);
  });
});
