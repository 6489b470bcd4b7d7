// A stdio MCP server that pages every list (two items per page): tools, resources, templates, prompts.
// --tools-end null|empty: the last tools page says nextCursor: null or "" (hand-written servers do).
// --tools-cursor-stuck: every tools page after the first answers the same nextCursor (a buggy server).
// --tools-fail-page N: the Nth tools page (from 1) is answered with a JSON-RPC error.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const server = new Server(
  { name: "paged", version: "1.0.0" },
  { capabilities: { tools: {}, resources: {}, prompts: {} } },
);
const paged = (items, cursor) => {
  const start = cursor === undefined ? 0 : Number(cursor);
  const next = start + 2;
  return { items: items.slice(start, next), ...(next < items.length ? { nextCursor: String(next) } : {}) };
};
const names = (prefix) => [1, 2, 3, 4, 5].map((n) => `${prefix}${n}`);
const argv = process.argv.slice(2);
const toolsEnd = argv.includes("--tools-end") ? argv[argv.indexOf("--tools-end") + 1] : undefined;
const stuck = argv.includes("--tools-cursor-stuck");
const failPage = argv.includes("--tools-fail-page") ? Number(argv[argv.indexOf("--tools-fail-page") + 1]) : 0;
server.setRequestHandler(ListToolsRequestSchema, ({ params }) => {
  if ((params?.cursor === undefined ? 0 : Number(params.cursor)) / 2 + 1 === failPage)
    throw new Error("upstream catalog unavailable");
  const { items, nextCursor } = stuck
    ? paged(names("tool"), params?.cursor === undefined ? undefined : "2")
    : paged(names("tool"), params?.cursor);
  const end = toolsEnd === "null" ? null : toolsEnd === "empty" ? "" : undefined;
  return {
    tools: items.map((name) => ({ name, inputSchema: { type: "object" } })),
    nextCursor: stuck ? "2" : (nextCursor ?? end),
  };
});
server.setRequestHandler(ListResourcesRequestSchema, ({ params }) => {
  const { items, nextCursor } = paged(names("res"), params?.cursor);
  return { resources: items.map((name) => ({ name, uri: `note://${name}` })), nextCursor };
});
server.setRequestHandler(ListResourceTemplatesRequestSchema, ({ params }) => {
  const { items, nextCursor } = paged(names("tpl"), params?.cursor);
  return {
    resourceTemplates: items.map((name) => ({ name, uriTemplate: `note://${name}/{id}` })),
    nextCursor,
  };
});
server.setRequestHandler(ListPromptsRequestSchema, ({ params }) => {
  const { items, nextCursor } = paged(names("prompt"), params?.cursor);
  return { prompts: items.map((name) => ({ name })), nextCursor };
});
// Not awaited: with no top-level await the fixture bundles as CommonJS (test/helpers/bundledFixture.ts).
void server.connect(new StdioServerTransport());
