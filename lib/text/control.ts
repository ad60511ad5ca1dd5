// C0 controls except tab and newline, DEL, and C1 controls (which include the 8-bit CSI, 0x9B).
// Escape sequences start with ESC (0x1B), so removing ESC and the other controls defuses them.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;
// Bidirectional overrides can make text display differently from what it is.
const BIDI = /[\u202A-\u202E\u2066-\u2069]/g;

/** Removes terminal control characters (keeps tab and newline); carriage returns become newlines. */
export function stripControl(text: string): string {
  return text.replace(/\r\n?/g, "\n").replace(CONTROL, "").replace(BIDI, "");
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

/** The first invisible or control character in `text` as `U+202E`, or null when there is none. */
export function invisibleCharacter(text: string): string | null {
  const found = INVISIBLE.exec(text)?.[0];
  if (found === undefined) return null;
  return `U+${(found.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
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
