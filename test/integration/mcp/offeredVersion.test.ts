import type { IncomingMessage, ServerResponse } from "node:http";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { entry, text, useHubs, useLoopbackHttp } from "./harness.js";

const SERVER = resolve(import.meta.dirname, "../../fixtures/mcp/older-version-server.mjs");

const ctx = useHubs();
const serve = useLoopbackHttp();

/** A stdio server speaking only `versions`, refusing any other `initialize` with `code`. */
const older = (code: number, versions: string[], protocol = "auto") =>
  entry({ command: process.execPath, args: [SERVER, String(code), ...versions], protocol });

describe("a server that refuses initialize naming the versions it supports (data.supported)", () => {
  for (const protocol of ["auto", "legacy", "stateless"]) {
    it(`protocol: ${protocol} — asks again in the newest of them svc speaks, and the session speaks it`, async () => {
      const h = ctx.hub(ctx.home, { old: older(-32602, ["2024-11-05", "2025-06-18"], protocol) });
      const status = await h.settled("old");
      expect(status.state).toBe("connected");
      expect(text(await h.call("old", "version", {}))).toBe("2025-06-18");
    });
  }

  it("the same for -32022 (a stateless server's code) when a version svc speaks is among them", async () => {
    const h = ctx.hub(ctx.home, { old: older(-32022, ["2025-03-26"], "legacy") });
    expect((await h.settled("old")).state).toBe("connected");
    expect(text(await h.call("old", "version", {}))).toBe("2025-03-26");
  });

  it("protocol: auto takes a refusal whose only supported version is 2026-07-28 as a stateless server's, whatever its code, and probes server/discover", async () => {
    const h = ctx.hub(ctx.home, { new: older(-32602, ["2026-07-28"]) });
    expect((await h.settled("new")).state).toBe("connected");
    expect(text(await h.call("new", "version", {}))).toBe("2026-07-28");
  });

  it("no version svc speaks among them: the refusal is the error, asked once, naming both sides' versions", async () => {
    const h = ctx.hub(ctx.home, { old: older(-32602, ["1999-01-01", "2000-01-01"], "legacy") });
    const status = await h.settled("old");
    expect(status.state).toBe("failed");
    expect(status.lastError).toBe(
      "mcp_servers.old: MCP error -32602: Unsupported protocol version — the server supports 1999-01-01, 2000-01-01, and svc speaks 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, 2024-10-07 (and 2026-07-28 through server/discover): configure the server to offer one of them, or update svc",
    );
  });

  it("over Streamable HTTP, where the refusal is the JSON-RPC body of an HTTP 400", async () => {
    const asked: string[] = [];
    const port = await serve((req: IncomingMessage, res: ServerResponse) => {
      if (req.method !== "POST") return void res.writeHead(405).end();
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        const message = JSON.parse(body) as {
          id?: number;
          method: string;
          params?: { protocolVersion?: string };
        };
        const json = (status: number, answer: unknown): void =>
          void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(answer));
        if (message.id === undefined) return void res.writeHead(202).end();
        if (message.method === "initialize") {
          const requested = message.params?.protocolVersion ?? "";
          asked.push(requested);
          if (requested !== "2025-03-26")
            return json(400, {
              jsonrpc: "2.0",
              id: message.id,
              error: {
                code: -32602,
                message: "Unsupported protocol version",
                data: { supported: ["2025-03-26"], requested },
              },
            });
          return json(200, {
            jsonrpc: "2.0",
            id: message.id,
            result: {
              protocolVersion: requested,
              capabilities: { tools: {} },
              serverInfo: { name: "h", version: "1" },
            },
          });
        }
        if (message.method === "tools/list")
          return json(200, {
            jsonrpc: "2.0",
            id: message.id,
            result: { tools: [{ name: "t", inputSchema: { type: "object" } }] },
          });
        json(200, { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } });
      });
    });
    const h = ctx.hub(ctx.home, { web: entry({ url: `http://127.0.0.1:${port}/mcp` }) });
    expect((await h.settled("web")).state).toBe("connected");
    expect(asked).toEqual(["2025-11-25", "2025-03-26"]);
  });
});
