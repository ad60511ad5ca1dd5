// biome-ignore-all lint/suspicious/noControlCharactersInRegex: matching control characters is the point.

// String sequences: OSC (ESC ] or 0x9D; OSC 8 is a hyperlink, OSC 0 sets the window title), DCS
// (ESC P, 0x90), SOS (ESC X, 0x98), PM (ESC ^, 0x9E) and APC (ESC _, 0x9F). Their text runs to BEL
// or ST (ESC \ or 0x9C); a terminal swallows everything until then, so an unterminated one is
// removed to the end of its line.
const STRING_SEQUENCE =
  /(?:\u001b[\]PX^_]|[\u0090\u0098\u009d\u009e\u009f])[^\u0007\u001b\u009c\n]*(?:\u0007|\u001b\\|\u009c)?/g;
// CSI (ESC [ or 0x9B): parameter bytes, intermediate bytes, then one final byte (colours, cursor
// moves, screen clears).
const CSI = /(?:\u001b\[|\u009b)[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]?/g;
// Any other escape: ESC, intermediate bytes, one final byte (ESC 7, ESC ( B, ESC c…).
const ESCAPE = /\u001b[\u0020-\u002f]*[\u0030-\u007e]?/g;
// C0 controls except tab and newline, DEL, and C1 controls.
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;
// Bidirectional overrides and isolates can make text display differently from what it is.
const BIDI = /[\u202A-\u202E\u2066-\u2069]/g;

/**
 * Removes what a terminal would act on instead of showing: whole escape sequences (CSI, OSC
 * including OSC 8 hyperlinks, DCS and the other string sequences, two-byte escapes, in their
 * 7- and 8-bit forms), then any other C0/C1 control but tab and newline, and bidirectional
 * overrides. Carriage returns become newlines, so text cannot overwrite a line.
 */
export function stripControl(text: string): string {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(STRING_SEQUENCE, "")
    .replace(CSI, "")
    .replace(ESCAPE, "")
    .replace(CONTROL, "")
    .replace(BIDI, "");
}

/** Shows terminal control characters as visible escapes (`\x1b`, `\u202e`); keeps tab and newline. */
export function escapeControl(text: string): string {
  return text
    .replace(/\r\n/g, "\n")
    .replace(CONTROL, (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, "0")}`)
    .replace(BIDI, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

// Characters that are invisible or change how the text around them reads: controls, format
// characters (BiDi embeddings, overrides, isolates and marks, zero-width space, word joiner,
// BOM, soft hyphen, …) and line/paragraph separators. Zero-width (non-)joiners are left out:
// scripts such as Persian and emoji sequences need them.
const INVISIBLE = /(?![\u200c\u200d])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** The first control or invisible character of `text` as U+XXXX and its 1-based position. */
export function invisibleCharacterAt(text: string): { code: string; position: number } | null {
  const found = INVISIBLE.exec(text);
  if (found === null) return null;
  const code = `U+${(found[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
  return { code, position: found.index + 1 };
}

/** The first invisible or control character in `text` as `U+202E`, or null when there is none. */
export function invisibleCharacter(text: string): string | null {
  return invisibleCharacterAt(text)?.code ?? null;
}

// The invisible characters that change how text reads (BiDi embeddings, overrides, isolates and
// marks, zero-width space, word joiner, BOM) and line/paragraph separators: never legitimate in
// a page of ours, so any that older data or a payload still holds is shown as an escape.
const READING_ORDER = /[\u061c\u200b\u200e\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]/g;

/** Shows the characters that could make text read differently from what it is as `\u202e`. */
export function escapeInvisible(text: string): string {
  return text.replace(
    READING_ORDER,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
