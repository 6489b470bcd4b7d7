import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { useHubs } from "../../integration/mcp/harness.js";

const ctx = useHubs();

const transportFor = inMemoryServers({
  inc: () => buildServer(),
  exc: () => buildServer(),
  off: () => buildServer(),
  bare: () => buildServer("legacy", { resources: false, prompts: false }),
  on: () => buildServer("legacy", { resources: false, prompts: false }),
});

/** Rule 4: a utility tool called by name that is not registered says which switch or capability is missing. */
describe("calling a utility tool that is not registered (SDK server over InMemoryTransport)", () => {
  it("names tools.resources / tools.prompts when off, and the missing capability when on", async () => {
    const entry = (tools: string) => `    command: ${IN_MEMORY_ENTRY.command}\n    tools: ${tools}\n`;
    ctx.home.write(
      "config.yaml",
      `mcp_servers:\n  off:\n${entry("{}")}  bare:\n${entry("{}")}  on:\n${entry("{resources: true, prompts: true}")}`,
    );
    const { config } = loadConfig({ home: ctx.home.dir, env: {} });
    const h = ctx.hub(ctx.home, config.mcp_servers, { transportFor });
    await expect(h.call("off", "list_resources", {})).rejects.toThrow(
      'mcp_servers.off: no tool "list_resources" is registered — it is a utility tool of tools.resources, which is off — set tools.resources: true to register it',
    );
    // By its registered name too, as svc mcp call takes it.
    await expect(h.call("off", "mcp__off__list_resources", {})).rejects.toThrow(
      "it is a utility tool of tools.resources, which is off",
    );
    await expect(h.call("bare", "get_prompt", { name: "x" })).rejects.toThrow(
      'mcp_servers.bare: no tool "get_prompt" is registered — it is a utility tool of tools.prompts, which is off — set tools.prompts: true to register it (the server does not offer prompts, so it would still not be)',
    );
    await expect(h.call("on", "read_resource", { uri: "x" })).rejects.toThrow(
      'mcp_servers.on: no tool "read_resource" is registered — it is a utility tool of tools.resources, and the server does not offer resources (utility tools are registered only for what the server offers)',
    );
    await expect(h.call("off", "nope", {})).rejects.toThrow(
      'mcp_servers.off: no tool "nope" is registered — run svc mcp tools off (tools.include/exclude match the server\'s own names)',
    );
  });

  it("a tool the server lists that tools.include / exclude leave out says which filter, not 'run svc mcp tools'", async () => {
    const entry = (tools: string) => `    command: ${IN_MEMORY_ENTRY.command}\n    tools: ${tools}\n`;
    ctx.home.write(
      "config.yaml",
      `mcp_servers:\n  inc:\n${entry("{include: [add]}")}  exc:\n${entry('{exclude: ["write-*"]}')}`,
    );
    const { config } = loadConfig({ home: ctx.home.dir, env: {} });
    const h = ctx.hub(ctx.home, config.mcp_servers, { transportFor });
    await expect(h.call("inc", "echo", { text: "x" })).rejects.toThrow(
      'mcp_servers.inc: no tool "echo" is registered — the server lists it, but tools.include leaves it out — add "echo" to tools.include',
    );
    await expect(h.call("exc", "write-note", { text: "x" })).rejects.toThrow(
      'mcp_servers.exc: no tool "write-note" is registered — the server lists it, but tools.exclude leaves it out — remove its entry from tools.exclude',
    );
    // A name the server does not list keeps the general advice.
    await expect(h.call("inc", "nope", {})).rejects.toThrow("run svc mcp tools inc");
  });
});
