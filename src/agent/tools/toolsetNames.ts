// Apart from ./index.ts (the tools themselves, with Node's HTTPS, TLS and zlib modules): `svc config check`
// names the built-in toolsets in its warnings and loads none of the tools.

/** The toolset names that are built in (a route's `toolsets` may name them); `web` is both web tools. */
export const BUILTIN_TOOLSETS: ReadonlySet<string> = new Set([
  "web",
  "web_extract",
  "web_search",
  "vision_analyze",
  "clarify",
  "terminal",
  "file",
]);
