import { TOOLSETS_WITHOUT_TOOLS } from "../../config/sections/tools.js";
import { DEFAULT_WEBHOOK_TOOLSETS, NO_MCP } from "./runner.js";

// Apart from ./index.ts (the runners and the built-in tools, with Node's HTTPS, TLS and zlib modules):
// `svc config check` names the toolsets in its warnings and loads none of those.

/** The platform toolset name; listing it in a route's `toolsets` brings the default set back in. */
export const WEBHOOK_TOOLSET = "svc-webhook";

/** Built-in toolsets a run may name; with MCP server names and `no_mcp` (unknown names are dropped and reported). */
export const KNOWN_TOOLSETS: ReadonlySet<string> = new Set([
  ...DEFAULT_WEBHOOK_TOOLSETS,
  "web",
  "terminal",
  "file",
  ...TOOLSETS_WITHOUT_TOOLS,
  "mcp",
  NO_MCP,
]);
