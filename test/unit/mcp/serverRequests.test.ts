import { PassThrough } from "node:stream";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { policyApprovals } from "../../../src/actors/mcp/approvals.js";
import { terminalApprovals } from "../../../src/actors/mcp/terminalApprovals.js";
import { silentLogger } from "../../../src/io/log.js";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, text, useHubs } from "../../integration/mcp/harness.js";

const ctx = useHubs();
/** Every server name gets its own real SDK fixture server over a linked in-memory pair. */
const transportFor = inMemoryServers(() => buildServer());
const fixture = (extra: Record<string, unknown> = {}) => entry({ ...IN_MEMORY_ENTRY, ...extra });

describe("server-initiated requests (SDK server over InMemoryTransport)", () => {
  it("sampling: disabled by default (not advertised); enabled → answered by the runner, max_tokens clamped", async () => {
    const seen: Array<{ prompt: string; maxTokens: number; model?: string }> = [];
    const runner = async (r: { prompt: string; maxTokens: number; model?: string }) => {
      seen.push(r);
      return `reply to ${r.prompt}`;
    };
    const h = ctx.hub(
      ctx.home,
      { off: fixture(), on: fixture({ sampling: { enabled: true, max_tokens: 50, model: "m1" } }) },
      { runner, transportFor },
    );
    const off = await h.call("off", "sample", { prompt: "hi" });
    expect(off.isError).toBe(true);
    expect(text(await h.call("on", "sample", { prompt: "hi" }))).toBe("m1:reply to user: hi");
    expect(seen).toEqual([expect.objectContaining({ prompt: "user: hi", maxTokens: 50, model: "m1" })]);
  });

  it("sampling: requests over max_requests_per_minute are refused", async () => {
    let now = 1_000_000;
    const h = ctx.hub(
      ctx.home,
      { s: fixture({ sampling: { enabled: true, max_requests_per_minute: 1 } }) },
      { runner: async () => "ok", now: () => now, transportFor },
    );
    expect(text(await h.call("s", "sample", { prompt: "1" }))).toBe("svc-agent:ok");
    expect(text(await h.call("s", "sample", { prompt: "2" }))).toMatch(/sampling failed: .*rate limit/);
    now += 60_001;
    expect(text(await h.call("s", "sample", { prompt: "3" }))).toBe("svc-agent:ok");
  });

  it("sampling: the per-minute window is counted on a clock that is never set, not on the system clock", async () => {
    // Only Date and performance are faked: the SDK's own timers stay real.
    vi.useFakeTimers({ toFake: ["Date", "performance"] });
    try {
      const h = ctx.hub(
        ctx.home,
        { s: fixture({ sampling: { enabled: true, max_requests_per_minute: 1 } }) },
        { runner: async () => "ok", transportFor },
      );
      expect(text(await h.call("s", "sample", { prompt: "1" }))).toBe("svc-agent:ok");
      // The system clock set back an hour (NTP): a minute later the window has still passed.
      vi.setSystemTime(Date.now() - 3_600_000);
      vi.advanceTimersByTime(60_001);
      expect(text(await h.call("s", "sample", { prompt: "2" }))).toBe("svc-agent:ok");
      expect(text(await h.call("s", "sample", { prompt: "3" }))).toMatch(/sampling failed: .*rate limit/);
    } finally {
      vi.useRealTimers();
    }
  });

  it("form elicitation goes to the approval surface (terminal prompt); URL mode is declined", async () => {
    const input = Object.assign(new PassThrough(), { isTTY: true });
    const output = new PassThrough();
    const asked: string[] = [];
    output.on("data", (chunk: Buffer) => {
      const line = chunk.toString();
      asked.push(line);
      if (line.startsWith("  color")) input.write("red\n");
      if (line.includes("Send these answers")) input.write("y\n");
    });
    // elicitation.unattended: defaults does not apply: a person is at the terminal and answers.
    const h = ctx.hub(
      ctx.home,
      { e: fixture({ elicitation: { unattended: "defaults" } }) },
      { approvals: terminalApprovals({ input, output }), transportFor },
    );
    expect(JSON.parse(text(await h.call("e", "ask", {})))).toEqual({
      action: "accept",
      content: { color: "red" },
    });
    expect(asked.join("")).toContain("Pick a color");
    expect(JSON.parse(text(await h.call("e", "ask-url", {})))).toEqual({ action: "decline" });
  });

  it("the terminal surface answers no when stdin is not a terminal", async () => {
    const input = Object.assign(new PassThrough(), { isTTY: false });
    const h = ctx.hub(
      ctx.home,
      { e: fixture(), u: fixture({ trust: "untrusted" }) },
      { approvals: terminalApprovals({ input, output: new PassThrough() }), transportFor },
    );
    expect(JSON.parse(text(await h.call("e", "ask", {})))).toEqual({ action: "decline" });
    await expect(h.call("u", "add", { a: 1, b: 1 })).rejects.toMatchObject({ code: "approval_denied" });
  });

  it("elicitation.unattended: defaults answers an unattended form with its defaults, in the gateway's surface and a terminal-less CLI", async () => {
    const output = new PassThrough();
    let written = "";
    output.on("data", (chunk: Buffer) => (written += chunk.toString()));
    const cli = ctx.hub(
      ctx.home,
      { d: fixture({ elicitation: { unattended: "defaults" } }), plain: fixture() },
      {
        approvals: terminalApprovals({ input: Object.assign(new PassThrough(), { isTTY: false }), output }),
        transportFor,
      },
    );
    expect(JSON.parse(text(await cli.call("d", "ask", {})))).toEqual({
      action: "accept",
      content: { color: "blue" },
    });
    expect(JSON.parse(text(await cli.call("plain", "ask", {})))).toEqual({ action: "decline" });
    // URL mode stays declined whatever the policy.
    expect(JSON.parse(text(await cli.call("d", "ask-url", {})))).toEqual({ action: "decline" });
    // Only the form declined for want of a terminal is said (the defaults' answer and URL mode are not).
    expect(written).toMatch(/^svc: elicitation from plain: declined — stdin is not a terminal[^\n]*\n$/);
    const gateway = ctx.hub(
      ctx.home,
      { d: fixture({ elicitation: { unattended: "defaults" } }), plain: fixture() },
      { approvals: policyApprovals("deny", silentLogger()), transportFor },
    );
    expect(JSON.parse(text(await gateway.call("d", "ask", {})))).toEqual({
      action: "accept",
      content: { color: "blue" },
    });
    expect(JSON.parse(text(await gateway.call("plain", "ask", {})))).toEqual({ action: "decline" });
  });

  it("elicitation.timeout cancels an unanswered form; elicitation.enabled: false is not advertised", async () => {
    const h = ctx.hub(
      ctx.home,
      { slow: fixture({ elicitation: { timeout: 0.2 } }), off: fixture({ elicitation: { enabled: false } }) },
      {
        approvals: {
          approve: async () => false,
          elicit: (_r, signal) =>
            new Promise((resolve) =>
              signal.addEventListener("abort", () => resolve({ action: "accept", content: {} })),
            ),
        },
        transportFor,
      },
    );
    const slow = text(await h.call("slow", "ask", {}));
    expect(JSON.parse(slow)).toEqual({ action: "cancel" });
    const off = await h.call("off", "ask", {});
    expect(off.isError).toBe(true);
    expect(text(off)).toMatch(/does not support.*elicitation/i);
  });
});

describe("naming, results and tools/list_changed (SDK server over InMemoryTransport)", () => {
  it("registers mcp__<server>__<tool> names, sanitized; an isError result comes back as an error result", async () => {
    const h = ctx.hub(ctx.home, { fx: fixture() }, { transportFor });
    await h.settled("fx");
    const names = h.tools().map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(["mcp__fx__echo", "mcp__fx__write_note", "mcp__fx__snake_ro"]),
    );
    expect(text(await h.call("fx", "mcp__fx__echo", { text: "by registered name" }))).toBe(
      "by registered name",
    );
    const failed = await h.call("fx", "fail", {});
    expect(failed.isError).toBe(true);
    expect(text(failed)).toBe("it broke");
  });

  it("re-lists and re-registers the server's tools on list_changed", async () => {
    const h = ctx.hub(ctx.home, { fx: fixture() }, { transportFor });
    await h.settled("fx");
    expect(h.tools().map((t) => t.name)).not.toContain("mcp__fx__late_one");
    await h.call("fx", "add-tool", { name: "late.one" });
    await vi.waitFor(() => expect(h.tools().map((t) => t.name)).toContain("mcp__fx__late_one"), {
      timeout: 3000,
      interval: 20,
    });
    expect(text(await h.call("fx", "late.one", {}))).toBe("late late.one");
  });
});

describe("a malformed sampling or elicitation request from the server", () => {
  /** A server whose tool "send" sends the request given in its arguments and answers the error it got (code, message). */
  function sender(): Server {
    const server = new Server({ name: "sender", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{ name: "send", inputSchema: { type: "object" } }],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const { method, params } = request.params.arguments as {
        method: string;
        params: Record<string, unknown>;
      };
      try {
        await server.request({ method, params } as never, z.unknown());
        return { content: [{ type: "text", text: "answered" }] };
      } catch (err) {
        const { code, message } = err as { code?: unknown; message?: unknown };
        return { content: [{ type: "text", text: `${String(code)} ${String(message)}` }] };
      }
    });
    return server;
  }

  it("is answered with JSON-RPC's -32602 Invalid params, not -32603 Internal error", async () => {
    const ran: number[] = [];
    const h = ctx.hub(
      ctx.home,
      { s: fixture({ sampling: { enabled: true } }) },
      {
        runner: async (r: { maxTokens: number }) => {
          ran.push(r.maxTokens);
          return "ok";
        },
        transportFor: inMemoryServers(sender),
      },
    );
    const messages = [{ role: "user", content: { type: "text", text: "no maxTokens" } }];
    const sampling = await h.call("s", "send", { method: "sampling/createMessage", params: { messages } });
    expect(text(sampling)).toMatch(/^-32602 /);
    const form = await h.call("s", "send", {
      method: "elicitation/create",
      params: { message: "no schema" },
    });
    expect(text(form)).toMatch(/^-32602 /);
    // A maxTokens no model can sample is the server's fault: the runner never sees it.
    for (const maxTokens of [0, -5]) {
      const none = { messages, maxTokens };
      // The answer's message is the text alone: the SDK server adds "MCP error -32602: " once.
      expect(text(await h.call("s", "send", { method: "sampling/createMessage", params: none }))).toBe(
        `-32602 MCP error -32602: Invalid sampling request: maxTokens must be at least 1, got ${maxTokens}`,
      );
    }
    expect(ran).toEqual([]);
    // A well-formed one is still answered.
    const valid = { messages, maxTokens: 5 };
    expect(text(await h.call("s", "send", { method: "sampling/createMessage", params: valid }))).toBe(
      "answered",
    );
    expect(ran).toEqual([5]);
  });
  it("names what is wrong on one line: a form field svc cannot ask for, a missing field", async () => {
    const h = ctx.hub(
      ctx.home,
      { s: fixture({ sampling: { enabled: true } }) },
      { runner: async () => "ok", transportFor: inMemoryServers(sender) },
    );
    const form = (properties: Record<string, unknown>) => ({
      method: "elicitation/create",
      params: { message: "Fill this in", requestedSchema: { type: "object", properties } },
    });
    const nested = text(
      await h.call("s", "send", form({ name: { type: "string" }, address: { type: "object" } })),
    );
    expect(nested).toBe(
      '-32602 MCP error -32602: Invalid elicitation request: requestedSchema.properties.address (type "object") is no field svc can ask for — a form field is a string, a number or integer, a boolean, or a choice of strings (enum)',
    );
    const list = text(
      await h.call("s", "send", form({ tags: { type: "array", items: { type: "string" } } })),
    );
    expect(list).toMatch(
      /Invalid elicitation request: requestedSchema\.properties\.tags \(type "array"\) is no field/,
    );
    // A field of a form's kind with another keyword wrong is named by that keyword, not by its type.
    const minimum = text(await h.call("s", "send", form({ n: { type: "integer", minimum: "1" } })));
    expect(minimum).toMatch(
      /Invalid elicitation request: requestedSchema\.properties\.n\.minimum: expected number, received string$/,
    );
    const wrongDefault = text(await h.call("s", "send", form({ ok: { type: "boolean", default: "true" } })));
    expect(wrongDefault).toMatch(
      /requestedSchema\.properties\.ok\.default: expected boolean, received string$/,
    );
    const noMessage = text(
      await h.call("s", "send", {
        method: "sampling/createMessage",
        params: { messages: [{ role: "user", content: { type: "text", text: "x" } }] },
      }),
    );
    expect(noMessage).toBe(
      "-32602 MCP error -32602: Invalid sampling request: params.maxTokens: expected number, received undefined",
    );
    for (const answer of [nested, list, noMessage]) expect(answer).not.toContain("\n");
  });
});
