import pkg from "../package.json" with { type: "json" };

export const TOOL_NAME = "hn-digest";
export const TOOL_VERSION: string = pkg.version;

/** Sent with every request so site owners can see who is asking. */
export const USER_AGENT = `${TOOL_NAME}/${TOOL_VERSION} (Hacker News story digest; bun run digest)`;
