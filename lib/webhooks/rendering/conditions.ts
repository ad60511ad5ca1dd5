import { errorMessage } from "../../text/error-message.ts";
import {
  CONDITION_OPS,
  type Condition,
  type ConditionNode,
  type ConditionOp,
  type ConditionSet,
} from "../model.ts";
import {
  compileRegex,
  MAX_REGEX_CONDITIONS,
  MAX_REGEX_LENGTH,
  programSizeProblem,
  regexCountProblem,
  runnableRegex,
  UnrunnableRegexError,
} from "./condition-regex.ts";

/**
 * NetBox's condition sets: which changes queue a delivery for a webhook. A set is an object with
 * one key, `and` or `or`, holding a list of conditions `{attr, value, op, negate}` and nested
 * sets. Checked when a webhook is saved (with the path of the bad node), evaluated against the
 * changed object's data when the change is detected. Pure: no I/O.
 *
 * Beyond NetBox (netbox#18159): an attribute `prechange.<field>` reads the object as it was
 * before the change and `postchange.<field>` as it is after (the plain field stays the
 * post-change value, as NetBox's `data`), so "quantity fell below 5" can be said. Where a
 * snapshot does not exist (before a creation, after a deletion) its attributes are absent, and a
 * condition on an absent attribute is false.
 */

/** The snapshots of the object before and after a change; null where there is none. */
export interface ChangeSnapshots {
  prechange: unknown;
  postchange: unknown;
}

/** What a set is evaluated against: the changed object's data and its snapshots. */
export interface ConditionSubject extends ChangeSnapshots {
  data: unknown;
}

/** A condition set that is not valid; `path` points at the bad node, e.g. `$.and[1].op`. */
export class ConditionError extends Error {
  override name = "ConditionError";
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
  }
}

/** Which operators each type of `value` allows, as NetBox's Condition.TYPES. */
const OPS_BY_TYPE: Record<string, readonly ConditionOp[]> = {
  string: ["eq", "contains", "regex"],
  boolean: ["eq", "contains"],
  number: ["eq", "gt", "gte", "lt", "lte", "contains"],
  array: ["eq", "in", "contains"],
  null: ["eq"],
};
const CONDITION_KEYS = new Set(["attr", "value", "op", "negate"]);
const MAX_DEPTH = 32;

export { UnrunnableRegexError };

/** Parses condition-set JSON as typed by a person (`--condition`, the admin form). */
export function parseConditionText(text: string): ConditionSet {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const detail = errorMessage(error);
    throw new ConditionError("$", `not valid JSON (${detail})`);
  }
  return checkConditionSet(value);
}

/** `value` as a ConditionSet, or a ConditionError naming the first bad node. */
export function checkConditionSet(value: unknown): ConditionSet {
  checkSet(value, "$", { depth: 0, regexes: { count: 0 } });
  return value as ConditionSet;
}

/** Where a check is: how deep in the set, and the regex conditions seen so far in all of it. */
interface CheckState {
  depth: number;
  regexes: { count: number };
}

function checkSet(value: unknown, path: string, state: CheckState): void {
  const { depth } = state;
  if (depth > MAX_DEPTH) throw new ConditionError(path, `nested more than ${MAX_DEPTH} deep`);
  if (!isObject(value)) {
    throw new ConditionError(path, 'expected a set: an object with one key, "and" or "or"');
  }
  const keys = Object.keys(value);
  const [logic] = keys;
  if (keys.length !== 1 || (logic !== "and" && logic !== "or")) {
    throw new ConditionError(
      path,
      `expected a set: an object with exactly one key, "and" or "or" (found ${keys.length === 0 ? "none" : keys.map((k) => JSON.stringify(k)).join(", ")})`,
    );
  }
  const list = value[logic];
  if (!Array.isArray(list)) {
    throw new ConditionError(`${path}.${logic}`, "expected a list of conditions and sets");
  }
  list.forEach((node, i) => {
    const at = `${path}.${logic}[${i}]`;
    if (isObject(node) && ("and" in node || "or" in node) && !("attr" in node)) {
      checkSet(node, at, { ...state, depth: depth + 1 });
    } else {
      checkCondition(node, at, state);
    }
  });
}

function checkCondition(node: unknown, path: string, state: CheckState): void {
  if (!isObject(node)) {
    throw new ConditionError(
      path,
      'expected a condition {"attr", "value", "op", "negate"} or a set',
    );
  }
  const unknown = Object.keys(node).find((key) => !CONDITION_KEYS.has(key));
  if (unknown !== undefined) {
    throw new ConditionError(
      `${path}.${unknown}`,
      "unknown key: a condition has attr, value, op and negate",
    );
  }
  const { attr, op = "eq", negate } = node;
  if (typeof attr !== "string" || attr.split(".").some((part) => part === "")) {
    throw new ConditionError(`${path}.attr`, 'expected a dotted path such as "status.value"');
  }
  if (!("value" in node)) throw new ConditionError(`${path}.value`, "missing");
  if (typeof op !== "string" || !(CONDITION_OPS as readonly string[]).includes(op)) {
    throw new ConditionError(
      `${path}.op`,
      `unknown operator ${JSON.stringify(op)}: expected one of ${CONDITION_OPS.join(", ")}`,
    );
  }
  if (negate !== undefined && typeof negate !== "boolean") {
    throw new ConditionError(`${path}.negate`, "expected true or false");
  }
  const type = typeOf(node.value);
  const allowed = OPS_BY_TYPE[type];
  if (allowed === undefined) {
    throw new ConditionError(`${path}.value`, "expected a string, number, boolean, list or null");
  }
  if (!allowed.includes(op as ConditionOp)) {
    throw new ConditionError(
      `${path}.op`,
      `${op} does not apply to a ${type} value: expected one of ${allowed.join(", ")}`,
    );
  }
  if (op === "regex") checkRegex(node.value as string, path, state);
}

function checkRegex(pattern: string, path: string, state: CheckState): void {
  state.regexes.count += 1;
  if (state.regexes.count > MAX_REGEX_CONDITIONS) {
    throw new ConditionError(
      `${path}.op`,
      `regex condition number ${state.regexes.count}: a set holds at most ${MAX_REGEX_CONDITIONS}, nested sets included`,
    );
  }
  if (pattern.length > MAX_REGEX_LENGTH) {
    throw new ConditionError(`${path}.value`, `regex longer than ${MAX_REGEX_LENGTH} characters`);
  }
  let regex: ReturnType<typeof compileRegex>;
  try {
    regex = compileRegex(pattern);
  } catch (error) {
    const detail = errorMessage(error);
    throw new ConditionError(`${path}.value`, `invalid regex for RE2's syntax (${detail})`);
  }
  const tooBig = programSizeProblem(regex);
  if (tooBig !== null) throw new ConditionError(`${path}.value`, tooBig);
}

/**
 * Whether `data` (the changed object, as in the payload's `data`) satisfies the set. A condition
 * that cannot be evaluated (its attribute is missing, or the data has another type than the
 * operator needs) does not match, negated or not: a misconfigured condition queues nothing.
 * A regex that cannot run (stored before RE2 was its engine: a lookbehind, a backreference; or
 * before the bounds of condition-regex.ts: too big compiled, too many in the set) throws an
 * UnrunnableRegexError instead, so its change is recorded as failed, never silently "no match".
 */
export function conditionsMatch(
  set: ConditionSet,
  data: unknown,
  snapshots?: ChangeSnapshots,
): boolean {
  try {
    const tooMany = regexCountProblem(countRegexes(set));
    if (tooMany !== null) throw new UnrunnableRegexError(`the conditions cannot run: ${tooMany}`);
    return evalNode(set, { data, snapshots });
  } catch (error) {
    if (error instanceof UnrunnableRegexError) throw error;
    // A set stored without the checks above (not through the CLI or the admin) can be
    // malformed; the change it guards is still written, with nothing queued for this webhook.
    return false;
  }
}

/** The regex conditions in a set as stored (tolerant: a malformed set may come from the database). */
function countRegexes(node: unknown): number {
  if (!isObject(node)) return 0;
  const list = Array.isArray(node.and) ? node.and : Array.isArray(node.or) ? node.or : null;
  if (list === null) return node.op === "regex" ? 1 : 0;
  return list.reduce((sum: number, child: unknown) => sum + countRegexes(child), 0);
}

/** What a condition is evaluated against. */
interface Subject {
  data: unknown;
  snapshots: ChangeSnapshots | undefined;
}

function evalNode(node: ConditionNode, subject: Subject): boolean {
  if ("and" in node) return node.and.every((child) => evalNode(child, subject));
  if ("or" in node) return node.or.some((child) => evalNode(child, subject));
  return evalCondition(node, subject);
}

const MISSING = Symbol("missing");
const MISMATCH = Symbol("mismatch");

function evalCondition(condition: Condition, subject: Subject): boolean {
  const actual = resolve(subject, condition.attr);
  if (actual === MISSING) return false;
  const result = compare(condition.op ?? "eq", actual, condition.value);
  if (result === MISMATCH) return false;
  return condition.negate ? !result : result;
}

/** One condition of a set as evaluated against a change (the admin form's preview). */
export interface EvaluatedCondition {
  /** Where it is in the set, e.g. `$.and[1]`. */
  path: string;
  condition: Condition;
  /** The attribute's value in the change; absent when there is none (`found` false). */
  found: boolean;
  actual: unknown;
  result: boolean;
}

/** Every condition of `set`, in order, with the value it saw and its result. */
export function explainConditions(
  set: ConditionSet,
  data: unknown,
  snapshots?: ChangeSnapshots,
): EvaluatedCondition[] {
  const subject = { data, snapshots };
  const rows: EvaluatedCondition[] = [];
  const walk = (node: ConditionNode, path: string): void => {
    if ("and" in node || "or" in node) {
      const logic = "and" in node ? "and" : "or";
      const list = "and" in node ? node.and : node.or;
      for (const [i, child] of list.entries()) walk(child, `${path}.${logic}[${i}]`);
      return;
    }
    const actual = resolve(subject, node.attr);
    let result: boolean;
    try {
      result = evalCondition(node, subject);
    } catch {
      result = false; // a regex that cannot run: the change would be recorded as failed
    }
    rows.push({
      path,
      condition: node,
      found: actual !== MISSING,
      actual: actual === MISSING ? undefined : actual,
      result,
    });
  };
  walk(set, "$");
  return rows;
}

/**
 * A condition's attribute in the change: `prechange.…` and `postchange.…` in that snapshot
 * (absent where there is none), any other path in the changed object's data.
 */
function resolve(subject: Subject, attr: string): unknown {
  const [head, ...rest] = attr.split(".");
  if ((head === "prechange" || head === "postchange") && rest.length > 0) {
    const snapshot = subject.snapshots?.[head];
    if (snapshot === null || snapshot === undefined) return MISSING;
    return resolvePath(snapshot, rest);
  }
  return resolvePath(subject.data, attr.split("."));
}

/** A dotted path; through a list it collects the attribute of every element (as NetBox). */
function resolvePath(data: unknown, keys: readonly string[]): unknown {
  let current: unknown = data;
  for (const key of keys) {
    if (Array.isArray(current)) {
      const values: unknown[] = [];
      for (const item of current) {
        if (!isObject(item) || !Object.hasOwn(item, key)) return MISSING;
        values.push(item[key]);
      }
      current = values;
    } else if (isObject(current) && Object.hasOwn(current, key)) {
      current = current[key];
    } else {
      return MISSING;
    }
  }
  return current;
}

function compare(op: ConditionOp, actual: unknown, value: unknown): boolean | typeof MISMATCH {
  switch (op) {
    case "eq":
      return deepEqual(actual, value);
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      if (typeof actual !== "number" || typeof value !== "number") return MISMATCH;
      if (op === "gt") return actual > value;
      if (op === "gte") return actual >= value;
      if (op === "lt") return actual < value;
      return actual <= value;
    }
    case "in":
      return Array.isArray(value) ? value.some((item) => deepEqual(actual, item)) : MISMATCH;
    case "contains":
      if (typeof actual === "string") {
        return typeof value === "string" ? actual.includes(value) : MISMATCH;
      }
      if (Array.isArray(actual)) return actual.some((item) => deepEqual(item, value));
      if (isObject(actual))
        return typeof value === "string" ? Object.hasOwn(actual, value) : MISMATCH;
      return MISMATCH;
    case "regex":
      // Anchored at the start like Python's re.match, which NetBox uses.
      return typeof actual === "string" && typeof value === "string"
        ? runnableRegex(value).lookingAt(actual)
        : MISMATCH;
  }
}

/** Whether a set has a regex condition anywhere (those run off the app's thread). */
export function hasRegex(node: ConditionNode): boolean {
  if ("and" in node) return node.and.some(hasRegex);
  if ("or" in node) return node.or.some(hasRegex);
  return node.op === "regex";
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]))
    );
  }
  return false;
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
