/**
 * Token estimates, erring high: a prompt that is longer than Ollama's window loses its front
 * (the instruction) silently, while one a little shorter than it could be only loses some text.
 * English averages about 4 characters per token, but code, numbers and names run shorter, so
 * ASCII counts 3.5 characters per token. Accented and Cyrillic letters count a token each, CJK
 * and other scripts 1.5, characters outside the BMP (emoji) 2.
 *
 * `scale` is the model's calibration (see calibration.ts): tokens its own tokenizer counted per
 * token estimated here, as Ollama reported for earlier prompts. Below 1 for a model seen to count
 * fewer, so windows fill up; above 1 for one seen to count more, so they never overfill.
 */
// Costs in fourteenths of a token, so sums stay exact integers.
const UNITS_PER_TOKEN = 14;

function charUnits(codePoint: number): number {
  if (codePoint < 0x80) return 4;
  if (codePoint < 0x800) return 14;
  if (codePoint < 0x10000) return 21;
  return 28;
}

export function estimateTokens(text: string, scale = 1): number {
  let units = 0;
  for (const ch of text) units += charUnits(ch.codePointAt(0) ?? 0);
  return Math.ceil((units * scale) / UNITS_PER_TOKEN);
}

/** The longest prefix of `text` within `tokens`, ending at a line break or space when possible. */
export function cutToTokens(text: string, tokens: number, scale = 1): string {
  const limit = (tokens * UNITS_PER_TOKEN) / scale;
  let units = 0;
  let end = 0;
  for (const ch of text) {
    units += charUnits(ch.codePointAt(0) ?? 0);
    if (units > limit) break;
    end += ch.length;
  }
  return endAtBoundary(text, end);
}

/** `text` cut to at most `chars` characters, at a line break or space when one is near the end. */
export function cutToChars(text: string, chars: number): string {
  // Never split a surrogate pair.
  const end = chars > 0 && /[\uD800-\uDBFF]/.test(text.charAt(chars - 1)) ? chars - 1 : chars;
  return endAtBoundary(text, Math.min(end, text.length));
}

function endAtBoundary(text: string, end: number): string {
  const prefix = text.slice(0, end);
  if (end >= text.length) return prefix;
  const lineBreak = prefix.lastIndexOf("\n");
  if (lineBreak > end * 0.8) return prefix.slice(0, lineBreak);
  const space = prefix.lastIndexOf(" ");
  return space > end * 0.8 ? prefix.slice(0, space) : prefix;
}
