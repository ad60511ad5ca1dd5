import { countComments } from "../fetch/thread.ts";
import type { Story, ThreadNode } from "../types.ts";
import { withoutCitations } from "./citations.ts";
import type { PackedDiscussion } from "./discussion.ts";
import type { Placement } from "./discussion-text.ts";
import { instruction } from "./instruction.ts";
import { CITE_TASK, clip, type PromptBudget, packedPrompt } from "./prompt.ts";

/** Characters of an earlier comment quoted before a new reply to it. */
const QUOTE_CHARS = 80;

export interface UpdatePrompt {
  prompt: string;
  /** The new comments as packed (total: new comments; shown: those in the prompt). */
  packed: PackedDiscussion;
}

/**
 * The prompt asking the model to bring an earlier discussion summary up to date from only the
 * comments posted after `since.latestCommentAt`: a new reply to an earlier comment quotes the
 * start of that comment. The instruction, the story and the earlier summary come first and the
 * counts last, as in the other prompts.
 */
export function discussionUpdatePrompt(
  story: Story,
  thread: readonly ThreadNode[],
  since: { summary: string; comments: number; latestCommentAt: number },
  budget: PromptBudget,
): UpdatePrompt {
  const total = Math.max(story.numComments, countComments(thread));
  const { roots, placement } = newComments(thread, since.latestCommentAt);
  const before = [
    instruction(budget.instruction),
    "",
    `Story: ${clip(story.title, 300)}`,
    `Update the summary of the discussion below, written when it had ${since.comments} comments, with the comments posted since: keep what still holds and add what they bring. ${CITE_TASK}`,
    "",
    "Summary so far:",
    '"""',
    // Its citations are links the model cannot read: the new summary cites the new comments.
    withoutCitations(since.summary),
    '"""',
    "",
    "New comments:",
    '"""',
    "",
  ].join("\n");
  return packedPrompt(
    before,
    roots,
    budget,
    {
      longestCounts: countsLine(total, total, total - 1),
      counts: (packed) => countsLine(total, packed.total, packed.shown),
    },
    { rootPlacement: placement },
  );
}

function countsLine(total: number, added: number, shown: number): string {
  return shown >= added
    ? `The story now has ${total} comments; all ${added} new ones are shown.`
    : `The story now has ${total} comments; ${shown} of the ${added} new ones are shown.`;
}

/**
 * The comments posted after `after` (unix s), as a forest: a new reply to an earlier comment
 * becomes a root placed as answering that comment, with its start quoted.
 */
export function newComments(
  thread: readonly ThreadNode[],
  after: number,
): { roots: ThreadNode[]; placement: Map<ThreadNode, Placement> } {
  const isNew = (node: ThreadNode) => (node.comment.createdAt ?? 0) > after;
  const roots: ThreadNode[] = [];
  const placement = new Map<ThreadNode, Placement>();
  const copy = (node: ThreadNode): ThreadNode => ({
    ...node,
    replies: node.replies.filter(isNew).map(copy),
  });
  const visit = (node: ThreadNode, parent: ThreadNode | null) => {
    if (isNew(node)) {
      const root = copy(node);
      roots.push(root);
      if (parent) {
        placement.set(root, {
          depth: 0,
          parentAuthor: parent.comment.author ?? "anonymous",
          quote: quoteOf(parent.comment.text),
        });
      }
      return;
    }
    for (const reply of node.replies) visit(reply, node);
  };
  for (const root of thread) visit(root, null);
  return { roots, placement };
}

function quoteOf(text: string): string {
  const line = text
    .replace(/\s+/g, " ")
    .replace(/["[\]]/g, "'")
    .trim();
  return line.length > QUOTE_CHARS ? `${line.slice(0, QUOTE_CHARS).trimEnd()}…` : line;
}
