import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { policyApprovals } from "../../../src/actors/mcp/approvals.js";
import type { McpHub } from "../../../src/actors/mcp/hub.js";
import type { SamplingRunner } from "../../../src/actors/mcp/serverRequests.js";
import { captureLogger } from "../../fakes/logCapture.js";
import {
  type EverythingHttp,
  type EverythingTransport,
  everythingStdio,
  startEverything,
} from "../../fixtures/mcp/everything.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { entry, makeHub, text } from "./harness.js";

/**
 * The server's tools once it knows svc's capabilities: sampling (enabled here) and elicitation add
 * their trigger tools; svc advertises neither roots nor client-side tasks, so `get-roots-list` and the
 * `*-async` tools are not offered.
 */
export const EVERYTHING_TOOLS = [
  "echo",
  "get-annotated-message",
  "get-env",
  "get-resource-links",
  "get-resource-reference",
  "get-structured-content",
  "get-sum",
  "get-tiny-image",
  "gzip-file-as-resource",
  "simulate-research-query",
  "toggle-simulated-logging",
  "toggle-subscriber-updates",
  "trigger-elicitation-request",
  "trigger-long-running-operation",
  "trigger-sampling-request",
  "trigger-url-elicitation",
];

const sanitized = (name: string) => `mcp__everything__${name.replace(/-/g, "_")}`;

interface Block {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  annotations?: { priority?: number; audience?: string[] };
  resource?: { uri: string; text?: string; blob?: string; mimeType?: string };
}

const blocks = (result: CallToolResult) => result.content as Block[];

/**
 * Black-box tests of svc's MCP client against `@modelcontextprotocol/server-everything` over one
 * transport: one server process (HTTP) or one process per entry (stdio), shared by every test.
 */
export function everythingSuite(transport: EverythingTransport): void {
  describe(`svc against @modelcontextprotocol/server-everything over ${transport}`, () => {
    let server: EverythingHttp | undefined;
    let home: TempHome;
    let hub: McpHub;
    const log = captureLogger();
    const sampled: Array<Parameters<SamplingRunner>[0]> = [];
    let research: Promise<CallToolResult>;

    const serverEntry = (extra: Record<string, unknown> = {}) => {
      if (server === undefined) return entry(everythingStdio(extra));
      return entry({ url: server.url, ...(transport === "sse" ? { transport: "sse" } : {}), ...extra });
    };

    beforeAll(async () => {
      if (transport !== "stdio") server = await startEverything(transport);
      home = tempHome();
      hub = makeHub(
        home,
        {
          everything: serverEntry({
            tools: { resources: true, prompts: true },
            sampling: { enabled: true, max_tokens: 50 },
            timeout: 20,
          }),
          // include wins; exclude is ignored (spec 2.2 rule 3)
          picked: serverEntry({ tools: { include: ["echo", "get-*"], exclude: ["echo"] } }),
          dropped: serverEntry({ tools: { exclude: ["trigger-*", "toggle-*"], prompts: true } }),
          // The same server again: its own call queue, so the 5 s task runs beside the other tests.
          researcher: serverEntry({ tools: { include: ["simulate-research-query"] }, timeout: 20 }),
          // The same server with a 0.3 s tool timeout: a task that outlives it, polled every 1 s.
          hasty: serverEntry({ tools: { include: ["simulate-research-query"] }, timeout: 0.3 }),
        },
        {
          logger: log.logger,
          approvals: policyApprovals("allow", log.logger),
          runner: async (request) => {
            sampled.push(request);
            return "a sampled answer";
          },
        },
      );
      await Promise.all(
        ["everything", "picked", "dropped", "researcher", "hasty"].map((s) => hub.settled(s)),
      );
      research = hub.call("researcher", "simulate-research-query", { topic: "otters", ambiguous: true });
      research.catch(() => undefined);
    }, 20_000);

    afterAll(async () => {
      await hub?.stop();
      await server?.kill();
      home?.cleanup();
    });

    it("registers every tool of the server as mcp__everything__<tool>, plus the enabled utility tools", () => {
      expect(hub.status().map((s) => [s.name, s.state])).toEqual([
        ["everything", "connected"],
        ["picked", "connected"],
        ["dropped", "connected"],
        ["researcher", "connected"],
        ["hasty", "connected"],
      ]);
      const names = hub
        .tools()
        .filter((t) => t.server === "everything")
        .map((t) => t.name);
      expect([...names].sort()).toEqual(
        [
          ...EVERYTHING_TOOLS.map(sanitized),
          "mcp__everything__get_prompt",
          "mcp__everything__list_prompts",
          "mcp__everything__list_resources",
          "mcp__everything__read_resource",
        ].sort(),
      );
      const originals = hub.toolsOf("everything").filter((t) => t.kind === "native");
      expect(originals.map((t) => t.original).sort()).toEqual(EVERYTHING_TOOLS);
    });

    it("applies include (which wins over exclude) and exclude to the server's own hyphenated names", () => {
      expect(
        hub
          .toolsOf("picked")
          .map((t) => t.original)
          .sort(),
      ).toEqual(EVERYTHING_TOOLS.filter((n) => n === "echo" || n.startsWith("get-")));
      expect(hub.status().find((s) => s.name === "picked")?.warnings).toEqual([
        "mcp_servers.picked.tools.exclude is ignored because tools.include is set (include wins) — remove one of them",
      ]);
      expect(
        hub
          .toolsOf("dropped")
          .map((t) => t.original)
          .sort(),
      ).toEqual(
        [
          ...EVERYTHING_TOOLS.filter((n) => !n.startsWith("trigger-") && !n.startsWith("toggle-")),
          "get_prompt",
          "list_prompts",
        ].sort(),
      );
    });

    it("calls echo and get-sum by the server's name and by the registered name", async () => {
      expect(text(await hub.call("everything", "echo", { message: "héllo ✓" }))).toBe("Echo: héllo ✓");
      expect(text(await hub.callRegistered("mcp__everything__get_sum", { a: 2, b: 40 }))).toBe(
        "The sum of 2 and 40 is 42.",
      );
      // The server rejects bad arguments with an isError result: returned as a result, not thrown.
      const bad = await hub.call("everything", "get-sum", { a: "two" });
      expect(bad.isError).toBe(true);
      expect(text(bad)).toMatch(/Input validation error/);
    });

    it("returns image, annotated, resource-link, embedded-resource and structured content unchanged", async () => {
      const image = blocks(await hub.call("everything", "get-tiny-image", {}));
      expect(image.map((b) => b.type)).toEqual(["text", "image", "text"]);
      expect(image[1]?.mimeType).toBe("image/png");
      expect(
        Buffer.from(image[1]?.data ?? "", "base64")
          .subarray(1, 4)
          .toString(),
      ).toBe("PNG");

      const annotated = blocks(
        await hub.call("everything", "get-annotated-message", { messageType: "error", includeImage: true }),
      );
      expect(annotated[0]).toEqual({
        type: "text",
        text: "Error: Operation failed",
        annotations: { priority: 1, audience: ["user", "assistant"] },
      });
      expect(annotated[1]).toMatchObject({
        type: "image",
        annotations: { priority: 0.5, audience: ["user"] },
      });

      const links = blocks(await hub.call("everything", "get-resource-links", { count: 2 }));
      expect(links.slice(1).map((b) => [b.type, b.uri])).toEqual([
        ["resource_link", "demo://resource/dynamic/blob/1"],
        ["resource_link", "demo://resource/dynamic/text/2"],
      ]);

      const embedded = blocks(
        await hub.call("everything", "get-resource-reference", { resourceType: "Text", resourceId: 3 }),
      );
      expect(embedded.find((b) => b.type === "resource")?.resource?.uri).toBe(
        "demo://resource/dynamic/text/3",
      );

      const structured = await hub.call("everything", "get-structured-content", { location: "Chicago" });
      expect(structured.structuredContent).toEqual(JSON.parse(text(structured)));
    });

    it("runs a long operation to its end, logging the server's progress notifications", async () => {
      const result = await hub.call("everything", "trigger-long-running-operation", {
        duration: 0.6,
        steps: 3,
      });
      expect(text(result)).toBe("Long running operation completed. Duration: 0.6 seconds, Steps: 3.");
      // The last notification can race the result (the SDK drops progress for a finished request).
      expect(log.messages()).toContain('[mcp] everything: "trigger-long-running-operation" progress 1/3');
    });

    it("answers sampling/createMessage with the agent runner, maxTokens clamped to sampling.max_tokens", async () => {
      const result = text(
        await hub.call("everything", "trigger-sampling-request", { prompt: "say hi", maxTokens: 500 }),
      );
      const answer = JSON.parse(result.slice(result.indexOf("{"))) as Record<string, unknown>;
      expect(answer).toEqual({
        model: "svc-agent",
        role: "assistant",
        stopReason: "endTurn",
        content: { type: "text", text: "a sampled answer" },
      });
      expect(sampled.at(-1)).toEqual({
        server: "everything",
        prompt: "user: Resource trigger-sampling-request context: say hi",
        systemPrompt: "You are a helpful test server.",
        maxTokens: 50,
      });
    });

    it("declines a form elicitation it cannot fill (a required field without default) and every URL elicitation", async () => {
      expect(text(await hub.call("everything", "trigger-elicitation-request", {}))).toMatch(
        /User declined to provide the requested information/,
      );
      expect(
        text(await hub.call("everything", "trigger-url-elicitation", { url: "https://example.com/consent" })),
      ).toMatch(/User declined to open the URL/);
      // The error path (-32042): the call fails naming the URL to open, with the server's code once.
      const refused = hub.call("everything", "trigger-url-elicitation", {
        url: "https://example.com/consent",
        elicitationId: `e-${transport}`,
        errorPath: true,
      });
      await expect(refused).rejects.toThrow(
        'mcp_servers.everything: "trigger-url-elicitation" needs the user to open https://modelcontextprotocol.io (Open this link to satisfy the prerequisite, then retry the request.) first (URL-mode elicitation; svc opens no browser) — open it, then call the tool again',
      );
    });

    it("lists and reads resources (static, templated and session ones) and renders prompts", async () => {
      const listed = JSON.parse(text(await hub.call("everything", "list_resources", {}))) as {
        resources: Array<{ uri: string }>;
        resourceTemplates: Array<{ uriTemplate: string }>;
      };
      expect(listed.resources.map((r) => r.uri)).toContain("demo://resource/static/document/features.md");
      expect(listed.resourceTemplates.map((t) => t.uriTemplate)).toEqual(
        expect.arrayContaining(["demo://resource/dynamic/text/{resourceId}"]),
      );
      const read = JSON.parse(
        text(await hub.call("everything", "read_resource", { uri: "demo://resource/dynamic/text/7" })),
      ) as { contents: Array<{ uri: string; text: string }> };
      expect(read.contents[0]?.text).toMatch(/^Resource 7: This is a plaintext resource/);

      // A tool registers a session resource (resources/list_changed): the next listing has it.
      const gz = blocks(
        await hub.call("everything", "gzip-file-as-resource", {
          name: `notes-${transport}.gz`,
          data: `data:text/plain;base64,${Buffer.from("hello gzip").toString("base64")}`,
        }),
      );
      expect(gz[0]).toMatchObject({
        type: "resource_link",
        uri: `demo://resource/session/notes-${transport}.gz`,
      });
      const again = JSON.parse(text(await hub.call("everything", "list_resources", {}))) as {
        resources: Array<{ uri: string }>;
      };
      expect(again.resources.map((r) => r.uri)).toContain(`demo://resource/session/notes-${transport}.gz`);

      // An unknown resource: the server's error, its code named once.
      await expect(hub.call("everything", "read_resource", { uri: "demo://nope" })).rejects.toThrow(
        'mcp_servers.everything: "read_resource" failed: MCP error -32602: Resource demo://nope not found',
      );

      const { prompts } = JSON.parse(text(await hub.call("everything", "list_prompts", {}))) as {
        prompts: Array<{ name: string }>;
      };
      expect(prompts.map((p) => p.name)).toEqual(
        expect.arrayContaining(["simple-prompt", "args-prompt", "resource-prompt"]),
      );
      const prompt = JSON.parse(
        text(
          await hub.call("everything", "get_prompt", { name: "args-prompt", arguments: { city: "Lyon" } }),
        ),
      ) as { messages: Array<{ content: { text: string } }> };
      expect(prompt.messages[0]?.content.text).toBe("What's weather in Lyon?");
      // Prompt arguments are strings in MCP: a number from the model is sent as its text.
      const embedded = JSON.parse(
        text(
          await hub.call("everything", "get_prompt", {
            name: "resource-prompt",
            arguments: { resourceType: "Text", resourceId: 2 },
          }),
        ),
      ) as { messages: Array<{ content: { type: string; resource?: { uri: string } } }> };
      expect(embedded.messages.map((m) => m.content.resource?.uri).filter(Boolean)).toEqual([
        "demo://resource/dynamic/text/2",
      ]);
      await expect(
        hub.call("everything", "get_prompt", { name: "args-prompt", arguments: "city=Lyon" }),
      ).rejects.toThrow(
        'get_prompt: arguments must be an object of strings, like {"city": "Paris"} — got "city=Lyon"',
      );
    });

    it("writes the server's log notifications to the gateway log at the matching level", async () => {
      await hub.call("everything", "toggle-simulated-logging", {});
      const pino = {
        debug: 20,
        info: 30,
        notice: 30,
        warning: 40,
        error: 50,
        critical: 50,
        alert: 50,
        emergency: 50,
      };
      await vi.waitFor(
        () => {
          const line = log
            .lines()
            .map(
              (l) =>
                JSON.parse(l) as {
                  msg: string;
                  level: number;
                  mcpLevel?: keyof typeof pino;
                  server?: string;
                },
            )
            .find((l) => l.mcpLevel !== undefined && l.server === "everything");
          expect(line?.msg).toMatch(/^\[mcp:everything\] \w+[- ]level[- ]message/i);
          expect(line?.level).toBe(pino[line?.mcpLevel ?? "debug"]);
        },
        { timeout: 10_000, interval: 20 },
      );
      await hub.call("everything", "toggle-simulated-logging", {});
    });

    it("runs a task-only tool (taskSupport: required) as a task, answering the elicitation it sends on the way", async () => {
      // Started in beforeAll on its own entry: it has been running beside the tests above.
      const result = await research;
      expect(result.isError).toBeUndefined();
      expect(text(result)).toMatch(
        /^# Research Report: otters \(User declined - using default interpretation\)/,
      );
    }, 15_000);

    it("bounds a task by the tool timeout, even inside the 1 s the server asks between polls", async () => {
      // The SDK sleeps between polls on setTimeout; with it faked that sleep never ends, while the
      // tool timeout (an AbortSignal timer, not faked) still fires. The call can only end if svc stops
      // waiting on the sleep when the timeout passes; if it waited for the next poll, it would hang.
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      try {
        await expect(hub.call("hasty", "simulate-research-query", { topic: "slow" })).rejects.toThrow(
          'mcp_servers.hasty: "simulate-research-query" did not answer within 0.3 s (timeout)',
        );
      } finally {
        vi.useRealTimers();
      }
    });
  });
}
