/**
 * Re-indents a JSON text with two spaces, as `JSON.stringify(value, null, 2)` would, but keeps
 * every token as written: numbers beyond 2^53 and string escapes are shown exactly as received,
 * which matters in a tool people use to see what was sent. Returns null when `text` is not JSON.
 */
export function prettyJson(text: string): string | null {
  try {
    JSON.parse(text);
  } catch {
    return null;
  }
  let out = "";
  let depth = 0;
  const newline = () => `\n${"  ".repeat(depth)}`;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end - 1;
    } else if (ch === "{" || ch === "[") {
      const next = nextToken(text, i + 1);
      if (text[next] === (ch === "{" ? "}" : "]")) {
        out += `${ch}${text[next]}`;
        i = next;
      } else {
        depth += 1;
        out += `${ch}${newline()}`;
      }
    } else if (ch === "}" || ch === "]") {
      depth -= 1;
      out += `${newline()}${ch}`;
    } else if (ch === ",") {
      out += `,${newline()}`;
    } else if (ch === ":") {
      out += ": ";
    } else if (ch !== " " && ch !== "\t" && ch !== "\n" && ch !== "\r") {
      out += ch;
    }
  }
  return out;
}

/** Index just past the closing quote of the string starting at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    if (text[i] === "\\") i += 2;
    else if (text[i] === '"') return i + 1;
    else i += 1;
  }
  return text.length;
}

function nextToken(text: string, from: number): number {
  let i = from;
  while (i < text.length && " \t\n\r".includes(text[i] ?? "")) i += 1;
  return i;
}
