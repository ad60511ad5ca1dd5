import { RE2JS } from "re2js";
import { errorMessage } from "../../text/error-message.ts";

/**
 * The regexes of condition sets, and their bounds. RE2 (re2js) matches in time linear in the
 * text, whatever the pattern, where a backtracking engine can take seconds (`(a+)+$` against 28
 * characters) or give up; lookarounds and backreferences are refused when saved. Linear is not
 * cheap: the time is about the compiled program's size times the text's length, and nested
 * counted repetitions multiply the size (a 988-character pattern compiled to 190,270
 * instructions and took 2.8 s per check on a 1,000-character value). So a pattern is bounded by
 * its compiled size and a set by how many regexes it holds: at save (a ConditionError with the
 * reason) and again when run (an UnrunnableRegexError), for sets stored before the bounds.
 */

/**
 * At most this many compiled instructions per regex. The slowest patterns found under it, such
 * as `((.|a|aa){1,25}){1,25}b`, took 16-40 ms on a 1,000-character value (bench/templates.ts).
 */
export const MAX_REGEX_PROGRAM_SIZE = 5000;
/** At most this many regex conditions in one set, nested sets included. */
export const MAX_REGEX_CONDITIONS = 16;
/** At most this many characters per pattern (checked at save). */
export const MAX_REGEX_LENGTH = 1000;

/** A condition's regex that cannot run: RE2 cannot compile it, or it is over a bound. */
export class UnrunnableRegexError extends Error {
  override name = "UnrunnableRegexError";
}

interface CompiledRegex {
  programSize: number;
  lookingAt(text: string): boolean;
}

const regexes = new Map<string, CompiledRegex>();

/** The compiled pattern (cached); throws RE2's syntax error as is. */
export function compileRegex(pattern: string): CompiledRegex {
  let regex = regexes.get(pattern);
  if (!regex) {
    const compiled = RE2JS.compile(pattern);
    regex = {
      programSize: compiled.programSize(),
      lookingAt: (text) => compiled.matcher(text).lookingAt(),
    };
    if (regexes.size >= 1000) regexes.clear();
    regexes.set(pattern, regex);
  }
  return regex;
}

/** Why a compiled pattern is too big to run, or null when it is within the bound. */
export function programSizeProblem(regex: CompiledRegex): string | null {
  if (regex.programSize <= MAX_REGEX_PROGRAM_SIZE) return null;
  return `the regex compiles to ${regex.programSize.toLocaleString("en-US")} instructions: at most ${MAX_REGEX_PROGRAM_SIZE.toLocaleString("en-US")} (nested counted repetitions such as (a{1,30}){1,30} multiply)`;
}

/** Why a set holding `count` regex conditions cannot run, or null when it is within the bound. */
export function regexCountProblem(count: number): string | null {
  if (count <= MAX_REGEX_CONDITIONS) return null;
  return `the set holds ${count} regex conditions: at most ${MAX_REGEX_CONDITIONS}, nested sets included`;
}

/** The pattern ready to run, or an UnrunnableRegexError saying why it cannot. */
export function runnableRegex(pattern: string): CompiledRegex {
  let regex: CompiledRegex;
  try {
    regex = compileRegex(pattern);
  } catch (error) {
    throw new UnrunnableRegexError(
      `the regex ${JSON.stringify(pattern)} cannot run: ${errorMessage(error)}`,
    );
  }
  const problem = programSizeProblem(regex);
  if (problem !== null) {
    throw new UnrunnableRegexError(
      `the regex ${JSON.stringify(shorten(pattern))} cannot run: ${problem}`,
    );
  }
  return regex;
}

function shorten(pattern: string): string {
  return pattern.length <= 80 ? pattern : `${pattern.slice(0, 77)}...`;
}
