import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FunctionLength, functionLengths } from "./function-lengths.ts";

// The compiler's API starts the native compiler once per measure: seconds on a busy machine.
setDefaultTimeout(60_000);

/** What a scanner by pattern gets wrong: braces in strings, templates, regexes, comments, JSX text. */
const EXAMPLE = `/** @jsxImportSource hono/jsx */
export function three(a: number) {
  return a + 1;
}

const arrow = (x: string) => {
  const braces = "}}}{";
  const template = \`\${x} } \${"{"}\`;
  const pattern = /[{}]+/g;
  // } a brace in a comment
  return [braces, template, pattern];
};

export class Box {
  constructor(readonly size: number) {}

  get area(): number {
    return this.size * this.size;
  }

  grow(by: number): Box {
    return new Box(this.size + by);
  }
}

export function Page(props: { items: string[] }) {
  return (
    <ul>
      {props.items.map((item) => (
        <li>
          The receiver's {item} } isn't a brace to count
        </li>
      ))}
    </ul>
  );
}

const table = { double: (n: number) => n * 2 };
`;

let dir = "";
let found: FunctionLength[] = [];
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "function-lengths-"));
  const compilerOptions = { jsx: "react-jsx", jsxImportSource: "hono/jsx", noEmit: true };
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions, include: ["*.tsx"] }),
  );
  writeFileSync(join(dir, "example.tsx"), EXAMPLE);
  found = await functionLengths(dir, ["example.tsx"]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("functionLengths()", () => {
  test("measures each function from its first line to its closing brace, by the compiler's parse", () => {
    expect(found.map(({ name, line, lines }) => [name, line, lines])).toEqual([
      ["three", 2, 3],
      ["arrow", 6, 7],
      ["constructor", 15, 1],
      ["area", 17, 3],
      ["grow", 21, 3],
      ["Page", 26, 11],
      ["(callback of props.items.map)", 29, 5],
      ["double", 38, 1],
    ]);
  });
});
