import { describe, expect, it } from "vitest";
import { runsNote } from "../../../src/agent/routeTools.js";

/** The note `svc mcp tools <server>` prints under its table for a model provider. */
describe("runsNote", () => {
  it("names only routes whose events start an agent run: not deliver_only or cron_job routes", () => {
    const note = runsNote("notes", [], {
      provider: "anthropic",
      routes: {
        all: {},
        direct: { deliver_only: true, toolsets: ["notes"] },
        fires: { cron_job: "nightly" },
        none: { toolsets: ["no_mcp"] },
        alerts: { deliver_only: true },
      },
      servers: ["notes"],
      trusted: true,
      approvals: "deny",
    });
    expect(note).toBe(
      "Agent runs (agent.provider anthropic): offered to cron jobs and routes all; not to routes none (their toolsets name no_mcp or other servers)\n",
    );
  });

  it("is printed for a command agent too (its run reaches the same tools at SVC_MCP_URL), not for echo", () => {
    const view = {
      routes: { all: {} },
      servers: ["notes"],
      trusted: false,
      approvals: "deny" as const,
    };
    const tools = [
      { name: "mcp__notes__lookup", readOnly: true },
      { name: "mcp__notes__delete", readOnly: false },
    ] as unknown as Parameters<typeof runsNote>[1];
    expect(runsNote("notes", tools, { ...view, provider: "command" })).toBe(
      "Agent runs (agent.provider command): offered to cron jobs and routes all\n" +
        "Refused in runs (untrusted server, no readOnlyHint, gateway.approvals: deny): mcp__notes__delete\n",
    );
    expect(runsNote("notes", tools, { ...view, provider: "echo" })).toBe("");
  });

  it("does not say cron jobs get a server when a server named like a default toolset takes their place", () => {
    // Cron runs get the default set (web_search, ...), in which a server named web_search picks that server alone.
    const view = {
      provider: "openai",
      routes: { plain: {}, picked: { toolsets: ["notes"] } },
      servers: ["notes", "web_search"],
      trusted: true,
      approvals: "deny" as const,
    };
    expect(runsNote("notes", [], view)).toBe(
      "Agent runs (agent.provider openai): offered to routes picked; not to cron jobs and routes plain (the default toolsets name the MCP server web_search, which they get alone)\n",
    );
    expect(runsNote("notes", [], { ...view, routes: { plain: {}, other: { toolsets: ["no_mcp"] } } })).toBe(
      "Agent runs (agent.provider openai): not offered to cron jobs and routes plain (the default toolsets name the MCP server web_search, which they get alone); not to routes other (their toolsets name no_mcp or other servers)\n",
    );
    expect(runsNote("web_search", [], view)).toBe(
      "Agent runs (agent.provider openai): offered to cron jobs and routes plain; not to routes picked (their toolsets name no_mcp or other servers)\n",
    );
  });
});
