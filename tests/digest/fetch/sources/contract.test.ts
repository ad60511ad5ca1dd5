import { createHnSource } from "../../../../lib/digest/fetch/hn/client.ts";
import { createLobstersSource } from "../../../../lib/digest/fetch/lobsters/client.ts";
import { commentHit, type Hit, startFakeHnSearch, storyHit } from "../../../fakes/hn-search.ts";
import { lobstersComment, lobstersStory, startFakeLobsters } from "../../../fakes/lobsters.ts";
import { sourceContract, type World } from "./contract.ts";

let nextHnId = 90_000_000;
let nextLobstersWorld = 0;

sourceContract({
  name: "hn",
  start(world: World) {
    const comments: Record<number, Hit[]> = {};
    const stories: unknown[] = world.stories.map((entry) => {
      const id = nextHnId++;
      const ids = new Map(entry.comments.map((comment) => [comment.key, nextHnId++]));
      comments[id] = entry.comments.map((comment) =>
        commentHit(id, {
          objectID: String(ids.get(comment.key)),
          parent_id: comment.parent === null ? id : ids.get(comment.parent),
          author: comment.author,
          comment_text: comment.deleted ? null : comment.html,
        }),
      );
      return storyHit({
        objectID: String(id),
        story_id: id,
        title: entry.title,
        url: entry.url ?? undefined,
        points: entry.points,
        num_comments: entry.comments.length,
        author: entry.author,
        created_at_i: entry.createdAt,
        created_at: new Date(entry.createdAt * 1000).toISOString(),
      });
    });
    if (world.malformedAt !== undefined) stories.splice(world.malformedAt, 0, { objectID: "1" });
    const search = startFakeHnSearch({ stories, comments });
    return {
      source: createHnSource(search.url),
      requests: search.requests,
      userAgents: search.userAgents,
      [Symbol.dispose]: () => search.stop(),
    };
  },
  failing(status) {
    const search = startFakeHnSearch({
      stories: [],
      intercept: () => new Response("no", { status }),
    });
    return {
      source: createHnSource(search.url),
      requests: search.requests,
      userAgents: search.userAgents,
      [Symbol.dispose]: () => search.stop(),
    };
  },
});

sourceContract({
  name: "lobsters",
  start(world: World) {
    const run = nextLobstersWorld++;
    const ids = world.stories.map((_, index) => `w${run}x${index}`);
    const site = startFakeLobsters({
      stories: (base) => {
        const stories: unknown[] = world.stories.map((entry, index) =>
          lobstersStory(base, {
            short_id: ids[index],
            title: entry.title,
            url: entry.url ?? "",
            score: entry.points,
            comment_count: entry.comments.length,
            // The older shape of the submitter, an object, on one story.
            submitter_user: index === 0 ? { username: entry.author, karma: 10 } : entry.author,
            created_at: new Date(entry.createdAt * 1000).toISOString().replace("Z", "+00:00"),
          }),
        );
        if (world.malformedAt !== undefined) stories.splice(world.malformedAt, 0, { short_id: 7 });
        return stories as Record<string, unknown>[];
      },
      comments: (base) =>
        Object.fromEntries(
          world.stories.map((entry, index) => {
            const short = new Map(
              entry.comments.map((comment) => [
                comment.key,
                `c${comment.key}${index}${ids[index]}`.slice(0, 12),
              ]),
            );
            return [
              ids[index] as string,
              entry.comments.map((comment) =>
                lobstersComment(base, {
                  short_id: short.get(comment.key),
                  parent: comment.parent === null ? null : (short.get(comment.parent) ?? null),
                  commenting_user: comment.author,
                  comment: comment.deleted ? "" : comment.html,
                  comment_plain: undefined,
                  is_deleted: comment.deleted === true,
                }),
              ),
            ];
          }),
        ),
    });
    return {
      source: createLobstersSource(site.url),
      requests: site.requests,
      userAgents: site.userAgents,
      [Symbol.dispose]: () => site.stop(),
    };
  },
  failing(status) {
    const site = startFakeLobsters({
      stories: () => [],
      intercept: () => new Response("no", { status }),
    });
    return {
      source: createLobstersSource(site.url),
      requests: site.requests,
      userAgents: site.userAgents,
      [Symbol.dispose]: () => site.stop(),
    };
  },
});
