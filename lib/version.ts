import pkg from "../package.json" with { type: "json" };

/** The project's version, from package.json: every command's --version and User-Agent. */
export const VERSION: string = pkg.version;

/** The digest's User-Agent, so site owners can see who is asking. */
export const USER_AGENT = `hn-digest/${VERSION} (Hacker News story digest; bun run digest)`;
