/**
 * What a reader gets for a budget on today's front page at a CPU's rates: modelled minutes
 * against the budget, the median story's comments and share of its article in the prompts, the
 * busiest thread's largest subthreads, and the prompts' anatomy in Llama 3 tokens (the shared
 * instruction, the per-comment headers, the content, the rest). Counted from the prompts the fake
 * Ollama received, by the marker each comment (`cmt…`) and paragraph (`par…`) starts with.
 */
import { loadDigestConfig } from "../lib/digest/config.ts";
import { runDigest } from "../lib/digest/digest.ts";
import { createMemoryLogger } from "../lib/log.ts";
import { startDigestWorld } from "../tests/fakes/digest-world.ts";
import { frontPageToday } from "../tests/fakes/front-page-today.ts";
import { promptKind } from "../tests/fakes/ollama.ts";
import { llama3Tokens, type Rates } from "./digest-budget.ts";

export interface Anatomy {
  instruction: number;
  headers: number;
  content: number;
  other: number;
  answers: number;
}

export interface Reach {
  budget: string;
  modelledMinutes: number;
  calls: number;
  medianComments: number;
  medianArticleShare: number;
  largest: number[];
  anatomy: Anatomy;
  /** The line saying what the budget cut, when one was written. */
  cut: string | undefined;
}

const COMMENT = /\bcmt\d{3} /g;
const PARAGRAPH = /\bpar\d{3} /g;

/** One digest of today's front page at `rates` with `--time-budget budget`. */
export async function measureReach(
  rates: Rates,
  budget: string,
  options: { prefixCache?: boolean } = {},
): Promise<Reach> {
  const today = frontPageToday();
  using world = startDigestWorld({
    ...today,
    ollama: {
      placement: rates.placement,
      machine: {
        ...rates,
        answerTokens: 150,
        countTokens: llama3Tokens,
        prefixCache: options.prefixCache,
      },
    },
  });
  const config = loadDigestConfig(world.env, { "time-budget": budget, cache: false });
  const logger = createMemoryLogger();
  await runDigest(config, {
    stdout: { write() {} },
    stderr: { write() {} },
    logger,
    now: world.ollama.now,
  });
  const prompts = world.ollama.generateCalls.map((call) => call.prompt);
  const comments: number[] = [];
  const shares: number[] = [];
  for (const story of today.stories) {
    const title = new RegExp(`^Story: ${story.title}$`, "m");
    const mine = prompts.filter((prompt) => title.test(prompt));
    const discussion = mine.find((prompt) => promptKind(prompt) === "discussion") ?? "";
    const article = mine.find((prompt) => promptKind(prompt) === "article") ?? "";
    comments.push(new Set(discussion.match(COMMENT)).size);
    const paragraphs = today.paragraphs[String(story.title)] ?? 1;
    shares.push(new Set(article.match(PARAGRAPH)).size / paragraphs);
  }
  const busiest =
    prompts.find(
      (prompt) =>
        /^Story: Front-page story 1$/m.test(prompt) && promptKind(prompt) === "discussion",
    ) ?? "";
  const answers = world.ollama.modelled.reduce((sum, call) => sum + call.answerTokens, 0);
  return {
    budget,
    modelledMinutes: world.ollama.modelledMs / 60_000,
    calls: prompts.length,
    medianComments: median(comments),
    medianArticleShare: median(shares),
    largest: today.largest.map(
      (markers) => markers.filter((m) => busiest.match(new RegExp(`\\b${m} `))).length,
    ),
    anatomy: { ...sumAnatomy(prompts), answers },
    cut: logger.lines.find((line) => /budget/.test(line) && /cut|left out|fewer/.test(line)),
  };
}

/**
 * A prompt's tokens by part: the instruction (everything before the story line), the comment
 * headers (author, whom it answers, indentation), the content (comment and article text) and the
 * rest (title, framing, counts). Parts are counted apart, so their sum is close to, not exactly,
 * the prompt's count.
 */
export function sumAnatomy(prompts: readonly string[]): Omit<Anatomy, "answers"> {
  const total = { instruction: 0, headers: 0, content: 0, other: 0 };
  for (const prompt of prompts) {
    const storyAt = prompt.search(/^Story: /m);
    const instruction = storyAt > 0 ? prompt.slice(0, storyAt) : "";
    total.instruction += llama3Tokens(instruction);
    const rest = prompt.slice(instruction.length);
    const open = rest.indexOf('"""\n');
    const close = rest.lastIndexOf('\n"""');
    const body = open >= 0 && close > open ? rest.slice(open + 4, close) : "";
    let headers = "";
    let content = "";
    for (const line of body.split("\n")) {
      const header = /^(\s*(?:\[[^\]]*\]|[^\s:]{1,40}:)\s)/.exec(line);
      const at = header?.[1]?.length ?? 0;
      const marked = header && /^(cmt|new)\d{3} /.test(line.slice(at, at + 12));
      if (promptKind(prompt) === "discussion" && header && marked) {
        headers += header[1];
        content += `${line.slice(header[1]?.length ?? 0)}\n`;
      } else {
        content += `${line}\n`;
      }
    }
    const headerTokens = headers === "" ? 0 : llama3Tokens(headers);
    const contentTokens = llama3Tokens(content);
    total.headers += headerTokens;
    total.content += contentTokens;
    total.other += Math.max(0, llama3Tokens(rest) - headerTokens - contentTokens);
  }
  return total;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? 0)
    : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

export function reachLine(label: string, reach: Reach): string {
  const { anatomy } = reach;
  const prompt = anatomy.instruction + anatomy.headers + anatomy.content + anatomy.other;
  const share = (n: number) => `${((100 * n) / Math.max(1, prompt)).toFixed(0)} %`;
  return (
    `${label.padEnd(20)} --time-budget ${reach.budget.padEnd(4)} ${reach.modelledMinutes.toFixed(1)} modelled min · ${reach.calls} calls · ` +
    `median story ${reach.medianComments} comments, ${(100 * reach.medianArticleShare).toFixed(1)} % of its article · ` +
    `largest subthreads ${reach.largest.join(", ")}\n` +
    `${"".padEnd(20)} prompts ${prompt.toLocaleString("en-US")} tokens: content ${share(anatomy.content)}, ` +
    `instruction ${share(anatomy.instruction)}, comment headers ${share(anatomy.headers)}, other ${share(anatomy.other)} · ` +
    `answers ${anatomy.answers.toLocaleString("en-US")} tokens`
  );
}
