import { stripControl } from "../../text/control.ts";

// "Sure! Here is a summary of the article in 4 sentences:" and the like, up to its colon.
const LEAD_IN =
  /^\s*(?:(?:sure|certainly|of course|okay|ok|absolutely)\b[!,.]?\s*)?(?:here(?:'s|’s| is| are)|below is|the following is)\b[^\n:]{0,160}:[ \t]*\n*/i;
// "Sure!" or "Certainly." alone at the start.
const AGREEMENT = /^\s*(?:sure|certainly|of course|okay|absolutely)[!.,]?\s*(?:\n|$)/i;
// A title line the model was asked not to write: "Summary:", "**Summary**", "## Article summary".
const TITLE_LINE =
  /^\s*(?:#{1,6}\s*)?(?:\*\*|__)?(?:(?:article|discussion|story)\s+)?summary(?:\s+of\b[^\n.]{0,120})?\s*:?\s*(?:\*\*|__)?\s*:?\s*(?:\n|$)/i;
// "**Summary:** The article…": the same label leading the first line.
const INLINE_LABEL = /^\s*(?:\*\*|__)?summary\s*:\s*(?:\*\*|__)?\s*(?=\S)/i;
// "Let me know if you want more detail." and the like, at the very end.
const SIGN_OFF =
  /\n+\s*(?:let me know\b|i hope (?:this|that) helps\b|feel free to\b|would you like\b|if you(?:'d| would) like\b)[^\n]*\s*$/i;

/**
 * The model's answer as a summary: terminal controls removed, then the preambles models add
 * despite the instruction ("Here is a summary of the article:", a "Summary:" title, "Sure!")
 * and a closing offer of more help. Returns "" when nothing else was said.
 */
export function cleanSummary(answer: string): string {
  let text = stripControl(answer).trim();
  for (let pass = 0; pass < 3; pass++) {
    const before = text;
    text = text.replace(AGREEMENT, "").replace(LEAD_IN, "").replace(TITLE_LINE, "");
    text = text.replace(INLINE_LABEL, "").trim();
    if (text === before) break;
  }
  return text.replace(SIGN_OFF, "").trim();
}
