import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it } from "vitest";
import { outcomeOf } from "../../../src/agent/mcpTools.js";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, useHubs } from "../../integration/mcp/harness.js";

/**
 * read_resource and get_prompt as tool results: binary contents reach no model as base64 text
 * (docs/agent.md, docs/mcp.md).
 */

const blob = Buffer.alloc(3000).toString("base64");
const ctx = useHubs();
const transportFor = inMemoryServers(() => {
  const server = new McpServer({ name: "files", version: "1.0.0" });
  server.registerResource("zip", "file:///r.zip", {}, () => ({
    contents: [{ uri: "file:///r.zip", mimeType: "application/zip", blob }],
  }));
  server.registerResource("txt", "file:///a.txt", {}, () => ({
    contents: [{ uri: "file:///a.txt", mimeType: "text/plain", text: "hello" }],
  }));
  // As server-everything's complex_prompt: a text message, then an image.
  server.registerPrompt("with_image", {}, () => ({
    messages: [
      { role: "user", content: { type: "text", text: "Look at this" } },
      { role: "user", content: { type: "image", data: blob, mimeType: "image/png" } },
    ],
  }));
  return server;
});
const hub = () =>
  ctx.hub(
    ctx.home,
    { files: entry({ ...IN_MEMORY_ENTRY, tools: { resources: true, prompts: true } }) },
    { transportFor },
  );

describe("read_resource results", () => {
  it("a text resource is the server's JSON, as before", async () => {
    const result = await hub().call("files", "read_resource", { uri: "file:///a.txt" });
    expect(outcomeOf(result)).toEqual({
      ok: true,
      content: [
        {
          type: "text",
          text: JSON.stringify(
            { contents: [{ uri: "file:///a.txt", mimeType: "text/plain", text: "hello" }] },
            null,
            2,
          ),
        },
      ],
    });
  });

  it("a binary resource reaches the model as a line naming its type and size, not as base64", async () => {
    const result = await hub().call("files", "read_resource", { uri: "file:///r.zip" });
    const outcome = outcomeOf(result);
    expect(outcome).toEqual({
      ok: true,
      content: [
        {
          type: "text",
          text: JSON.stringify(
            { contents: [{ uri: "file:///r.zip", mimeType: "application/zip" }] },
            null,
            2,
          ),
        },
        {
          type: "text",
          text: "[resource file:///r.zip: application/zip, 3000 bytes — not shown: tool results reach the model as text and images only]",
        },
      ],
    });
    expect(JSON.stringify(outcome)).not.toContain(blob.slice(0, 100));
    // The data itself stays in the result (svc mcp call --json prints it).
    expect(result.content[1]).toEqual({
      type: "resource",
      resource: { uri: "file:///r.zip", mimeType: "application/zip", blob },
    });
  });

  it("a prompt's image reaches the model as an image block after the prompt's JSON, not as base64 text", async () => {
    const result = await hub().call("files", "get_prompt", { name: "with_image" });
    const outcome = outcomeOf(result);
    expect(outcome).toEqual({
      ok: true,
      content: [
        {
          type: "text",
          text: JSON.stringify(
            {
              messages: [
                { role: "user", content: { type: "text", text: "Look at this" } },
                { role: "user", content: { type: "image", mimeType: "image/png" } },
              ],
            },
            null,
            2,
          ),
        },
        { type: "image", data: blob, mimeType: "image/png" },
      ],
    });
  });
});
