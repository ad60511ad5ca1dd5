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
