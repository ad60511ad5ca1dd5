import { join } from "node:path";
import { type Node, SyntaxKind } from "typescript/unstable/ast";
import { API } from "typescript/unstable/async";

/**
 * How long each function is, measured on the TypeScript compiler's own parse (the devDependency
 * `typescript`, whose API runs the native compiler): strings, templates, regular expressions,
 * comments and JSX text are the parser's business, not a guess by pattern.
 */

/** A function and how many lines it spans, its first line to its closing brace. */
export interface FunctionLength {
  file: string;
  name: string;
  line: number;
  lines: number;
}

const FUNCTION_KINDS = new Set<SyntaxKind>([
  SyntaxKind.FunctionDeclaration,
  SyntaxKind.FunctionExpression,
  SyntaxKind.ArrowFunction,
  SyntaxKind.MethodDeclaration,
  SyntaxKind.Constructor,
  SyntaxKind.GetAccessor,
  SyntaxKind.SetAccessor,
]);

/** What the compiler's nodes give this measure (the API's nodes have more). */
interface ParsedNode {
  kind: SyntaxKind;
  name?: ParsedNode;
  body?: ParsedNode;
  expression?: ParsedNode;
  getStart(): number;
  getEnd(): number;
  getText(): string;
  forEachChild(visit: (child: Node) => unknown): unknown;
}

interface ParsedFile extends ParsedNode {
  getLineAndCharacterOfPosition(position: number): { line: number };
}

/**
 * Every function with a body in `files` (paths relative to `root`, the folder of the
 * tsconfig.json whose project holds them): declarations, methods, accessors, constructors,
 * function expressions and arrows. Nested ones count on their own too, and an outer function's
 * lines include its inner ones. An unnamed function is named by what holds it: `const f = () =>`
 * is `f`, `{ f: () => … }` is `f`, a callback is `(callback of g)`.
 */
export async function functionLengths(root: string, files: string[]): Promise<FunctionLength[]> {
  const api = new API({ cwd: root });
  try {
    const snapshot = await api.updateSnapshot({ openProject: join(root, "tsconfig.json") });
    const [project] = await snapshot.getProjects();
    if (!project) throw new Error(`No TypeScript project in ${root}`);
    const found: FunctionLength[] = [];
    for (const file of files) {
      const source = (await project.program.getSourceFile(join(root, file))) as unknown as
        | ParsedFile
        | undefined;
      if (!source) throw new Error(`${file} is not in the project of ${root}/tsconfig.json`);
      found.push(...measure(source, file));
    }
    return found;
  } finally {
    await api.close();
  }
}

function measure(source: ParsedFile, file: string): FunctionLength[] {
  const found: FunctionLength[] = [];
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line + 1;
  function visit(node: ParsedNode, parent: ParsedNode | null): void {
    if (FUNCTION_KINDS.has(node.kind) && node.body !== undefined) {
      const line = lineOf(node.getStart());
      const lines = lineOf(node.getEnd()) - line + 1;
      found.push({ file, name: nameOf(node, parent), line, lines });
    }
    node.forEachChild((child) => {
      visit(child as unknown as ParsedNode, node);
    });
  }
  visit(source, null);
  return found;
}

function nameOf(node: ParsedNode, parent: ParsedNode | null): string {
  if (node.name !== undefined) return node.name.getText();
  if (node.kind === SyntaxKind.Constructor) return "constructor";
  if (parent === null) return "(anonymous)";
  if (
    (parent.kind === SyntaxKind.VariableDeclaration ||
      parent.kind === SyntaxKind.PropertyAssignment) &&
    parent.name !== undefined
  ) {
    return parent.name.getText();
  }
  if (parent.kind === SyntaxKind.CallExpression && parent.expression !== undefined) {
    return `(callback of ${parent.expression.getText()})`;
  }
  return "(anonymous)";
}
