import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { MAX_LIST_PAGES } from "../../../src/io/mcp/listPages.js";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { useHubs } from "../../integration/mcp/harness.js";

const ctx = useHubs();

/**
 * A server whose resource, template and prompt lists have one item per page. `pages`: how many pages each
 * list has (`Infinity`: a next cursor on every page); `loop`: the second page's cursor is the first's again.
 */
function pagedServer(options: { pages: number; loop?: boolean }): Server {
  const server = new Server(
    { name: "paged", version: "1.0.0" },
    { capabilities: { resources: {}, prompts: {} } },
  );
  const pageOf = (cursor: string | undefined) => (cursor === undefined ? 1 : Number(cursor.slice(1)) + 1);
  const next = (n: number) => {
    if (options.loop === true) return "c1";
    return n < options.pages ? `c${n}` : undefined;
  };
  server.setRequestHandler(ListResourcesRequestSchema, ({ params }) => {
    const n = pageOf(params?.cursor);
    return { resources: [{ uri: `note://r${n}`, name: `r${n}` }], nextCursor: next(n) };
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, ({ params }) => {
    const n = pageOf(params?.cursor);
    return { resourceTemplates: [{ uriTemplate: `note://t${n}/{id}`, name: `t${n}` }], nextCursor: next(n) };
  });
  server.setRequestHandler(ListPromptsRequestSchema, ({ params }) => {
    const n = pageOf(params?.cursor);
    return { prompts: [{ name: `p${n}` }], nextCursor: next(n) };
  });
  return server;
}

const transportFor = inMemoryServers({
  exact: () => pagedServer({ pages: MAX_LIST_PAGES }),
  endless: () => pagedServer({ pages: Number.POSITIVE_INFINITY }),
  looping: () => pagedServer({ pages: Number.POSITIVE_INFINITY, loop: true }),
});

function texts(result: { content: unknown }): string[] {
  return (result.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? "");
}

async function hubOf(...names: string[]) {
  const servers = names
    .map(
      (name) =>
        `  ${name}:\n    command: ${IN_MEMORY_ENTRY.command}\n    tools: {resources: true, prompts: true}\n`,
    )
    .join("");
  ctx.home.write("config.yaml", `mcp_servers:\n${servers}`);
  const { config } = loadConfig({ home: ctx.home.dir, env: {} });
  const h = ctx.hub(ctx.home, config.mcp_servers, { transportFor });
  for (const name of names) expect((await h.settled(name)).state).toBe("connected");
  return h;
}

/** docs/mcp.md, Tools: a list read page by page stops at 100 pages or a repeated cursor, and says so. */
describe("list_prompts and list_resources cut at the page limit (SDK server over InMemoryTransport)", () => {
  it("a list of exactly 100 pages is whole, with no note", async () => {
    const h = await hubOf("exact");
    const prompts = texts(await h.call("exact", "list_prompts", {}));
    expect(prompts).toHaveLength(1);
    expect((JSON.parse(prompts[0] as string) as { prompts: unknown[] }).prompts).toHaveLength(MAX_LIST_PAGES);
    const resources = texts(await h.call("exact", "list_resources", {}));
    expect(resources).toHaveLength(1);
  });

  it("a list with a next page after 100 pages gives the 100 pages and a note that it was cut", async () => {
    const h = await hubOf("endless");
    const prompts = texts(await h.call("endless", "list_prompts", {}));
    expect((JSON.parse(prompts[0] as string) as { prompts: unknown[] }).prompts).toHaveLength(MAX_LIST_PAGES);
    expect(prompts.slice(1)).toEqual([
      "prompts/list stopped after 100 pages (svc's limit) with more to come, so the prompts of later pages are not listed",
    ]);
    const resources = texts(await h.call("endless", "list_resources", {}));
    expect(resources.slice(1)).toEqual([
      "resources/list stopped after 100 pages (svc's limit) with more to come, so the resources of later pages are not listed",
      "resources/templates/list stopped after 100 pages (svc's limit) with more to come, so the resource templates of later pages are not listed",
    ]);
  });

  it("a server that sends a cursor again (a loop in its paging) gives the pages read and a note naming the cursor", async () => {
    const h = await hubOf("looping");
    const prompts = texts(await h.call("looping", "list_prompts", {}));
    expect((JSON.parse(prompts[0] as string) as { prompts: unknown[] }).prompts).toEqual([
      { name: "p1" },
      { name: "p2" },
    ]);
    expect(prompts.slice(1)).toEqual([
      'prompts/list stopped after 2 pages: the server sent cursor "c1" again (a loop in its paging), so any prompts of later pages are not listed',
    ]);
  });
});
