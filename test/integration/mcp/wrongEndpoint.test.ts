import { randomUUID } from "node:crypto";
import { createServer, request, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { formatTools } from "../../../src/cli/mcp/toolsOutput.js";
import { loadConfig } from "../../../src/config/load.js";
import type { McpServerEntry } from "../../../src/config/sections/mcp.js";
import { type FixtureHttp, startSse, startStreamableHttp } from "../../fixtures/mcp/httpServers.js";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { entry, text, useHubs } from "./harness.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});
const ctx = useHubs();

async function serve(start: Promise<FixtureHttp>): Promise<FixtureHttp> {
  const s = await start;
  closers.push(() => s.close());
  return s;
}

/** A web server with no MCP endpoint: every request is a 404 page. */
async function notFoundServer(): Promise<string> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(404, { "content-type": "text/plain" }).end("Cannot POST");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("a url that is not the configured transport's endpoint", () => {
  it("says which key to change: transport: sse for an SSE server, no transport: sse for Streamable HTTP, the path for a 404", async () => {
    const sse = await serve(startSse());
    const http = await serve(startStreamableHttp());
    const web = await notFoundServer();
    const h = ctx.hub(ctx.home, {
      needsSse: entry({ url: sse.url }),
      notSse: entry({ url: http.url, transport: "sse" }),
      nothing: entry({ url: `${web}/mpc` }),
      // An SSE server whose only route is GET /sse (Express) answers Streamable HTTP's POST with 404.
      sseOnGet: entry({ url: `${web}/sse` }),
    });
    expect((await h.settled("needsSse")).lastError).toMatch(
      /^mcp_servers\.needsSse: .*\(HTTP 405\) — the url does not take POST: if the server speaks the older SSE transport, set transport: sse$/,
    );
    expect((await h.settled("notSse")).lastError).toMatch(
      /^mcp_servers\.notSse: Error GETting the SSE stream \(HTTP 400\): .*Server not initialized.* — the url refused the SSE stream: if the server speaks Streamable HTTP, remove transport: sse$/,
    );
    expect((await h.settled("nothing")).lastError).toMatch(
      /^mcp_servers\.nothing: .*404.* — no MCP endpoint at this url: check its path \(often \/mcp, or \/sse for SSE servers\)$/,
    );
    expect((await h.settled("sseOnGet")).lastError).toMatch(
      /^mcp_servers\.sseOnGet: .*404.* — the url's path ends in \/sse, an SSE server's stream, which takes no POST: set transport: sse \(or, for a Streamable HTTP server, check the path: often \/mcp\)$/,
    );
  });
});

/**
 * A legacy SSE server that names its message endpoint with its own host name, `localhost`, while the url
 * says `127.0.0.1` (as servers that build the endpoint from their configured host do).
 */
async function otherOriginSseServer(): Promise<string> {
  const server: Server = createServer((req, res) => {
    const { port } = server.address() as AddressInfo;
    if (req.method !== "GET") return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(`event: endpoint\ndata: http://localhost:${port}/messages?session=1\n\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`;
}

describe("an SSE server that names its message endpoint on another origin", () => {
  it("says to write that origin in url (or set the server's base URL), beside the SDK's refusal", async () => {
    const h = ctx.hub(ctx.home, { sse: entry({ url: await otherOriginSseServer(), transport: "sse" }) });
    expect((await h.settled("sse")).lastError).toMatch(
      /^mcp_servers\.sse: Endpoint origin does not match connection origin: http:\/\/localhost:\d+ — the server's SSE stream named its message endpoint on that origin, not on the origin of mcp_servers\.sse\.url, and svc posts messages only to the url's own origin: if it is the same server, write url with that origin; else set the server's public base URL \(or have it announce a relative endpoint\)$/,
    );
  });
});

describe("a server that forgets the session it just opened (instances behind a load balancer without affinity)", () => {
  it("says so and what to set up, not that the url has no MCP endpoint (its initialize was answered there)", async () => {
    const lb = await serve(startStreamableHttp({ instances: 2 }));
    const h = ctx.hub(ctx.home, { lb: entry({ url: lb.url }) });
    const error = (await h.settled("lb")).lastError ?? "";
    expect(error).not.toContain("no MCP endpoint");
    expect(error).toMatch(
      /^mcp_servers\.lb: .*Session not found.*\(HTTP 404\) — the server no longer knows the session it opened at this connect's initialize: a server run as several instances behind a load balancer does this when a request reaches another instance than the one that opened the session — route each session to one instance \(session affinity on the Mcp-Session-Id header\)$/,
    );
  });
});

/** Listens on 127.0.0.1, closed (its open connections with it) after the test; resolves to the port. */
async function listenForTest(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}

/**
 * The SDK's MCP server routed as the TypeScript SDK's examples route it — a request naming a session it
 * opened goes to that session, an `initialize` without one opens a new one, any other request is refused
 * with `refusal` (400 "Bad Request: No valid session ID provided" as the examples, or 404 "Session not
 * found") — behind a reverse proxy that drops the Mcp-Session-Id header from the server's answers.
 */
async function sessionDroppingProxy(refusal: 400 | 404): Promise<string> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  closers.push(async () => {
    await Promise.all([...sessions.values()].map((t) => t.close().catch(() => undefined)));
  });
  const upstream = await listenForTest(
    createServer(async (req, res) => {
      let text = "";
      for await (const chunk of req) text += chunk;
      const body: unknown = text === "" ? undefined : JSON.parse(text);
      const id = req.headers["mcp-session-id"];
      let transport = typeof id === "string" ? sessions.get(id) : undefined;
      if (transport === undefined && id === undefined && isInitializeRequest(body)) {
        const opened = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => void sessions.set(sid, opened),
        });
        await buildServer("legacy").connect(opened);
        transport = opened;
      }
      if (transport === undefined) {
        const error =
          refusal === 400
            ? { code: -32000, message: "Bad Request: No valid session ID provided" }
            : { code: -32001, message: "Session not found" };
        res
          .writeHead(refusal, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", error, id: null }));
        return;
      }
      await transport.handleRequest(req, res, body);
    }),
  );
  const port = await listenForTest(
    createServer((req, res) => {
      const { method, url, headers } = req;
      const out = request({ host: "127.0.0.1", port: upstream, method, path: url, headers }, (answer) => {
        const { "mcp-session-id": _dropped, ...kept } = answer.headers;
        res.writeHead(answer.statusCode ?? 502, kept);
        answer.pipe(res);
      });
      out.on("error", () => res.destroy());
      req.pipe(out);
    }),
  );
  return `http://127.0.0.1:${port}/mcp`;
}

describe("a server behind a proxy that drops the Mcp-Session-Id of initialize's answer", () => {
  const note =
    "the server answered this connect's initialize without an Mcp-Session-Id header, then refused its notifications/initialized — if a proxy is in front of the server, it may drop that header: check that the proxy passes Mcp-Session-Id through (in answers and in requests)";

  it("a 400 naming the session says that initialize gave no Mcp-Session-Id and to check the proxy", async () => {
    const h = ctx.hub(ctx.home, { proxied: entry({ url: await sessionDroppingProxy(400) }) });
    expect((await h.settled("proxied")).lastError).toBe(
      `mcp_servers.proxied: Streamable HTTP error: Error POSTing to endpoint: {"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null} (HTTP 400) — ${note}`,
    );
  });

  it("a 404 says so too, not that the url has no MCP endpoint (its initialize was answered there)", async () => {
    const h = ctx.hub(ctx.home, { proxied: entry({ url: await sessionDroppingProxy(404) }) });
    const error = (await h.settled("proxied")).lastError ?? "";
    expect(error).not.toContain("no MCP endpoint");
    expect(error).toBe(
      `mcp_servers.proxied: Streamable HTTP error: Error POSTing to endpoint: {"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null} (HTTP 404) — ${note}`,
    );
  });
});

/**
 * An SSE server mounted under `/tools` behind a proxy (stream at `/tools/sse`, messages at `/tools/messages`)
 * that announces its message endpoint as `/messages`, without the prefix, as a server unaware of the proxy does.
 */
async function prefixedSseServer(): Promise<string> {
  const sessions = new Map<string, SSEServerTransport>();
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "GET" && url.pathname === "/tools/sse") {
      const transport = new SSEServerTransport("/messages", res);
      sessions.set(transport.sessionId, transport);
      await buildServer("legacy").connect(transport);
      return;
    }
    const transport = sessions.get(url.searchParams.get("sessionId") ?? "");
    if (req.method === "POST" && url.pathname === "/tools/messages" && transport !== undefined)
      return void (await transport.handlePostMessage(req, res));
    res.writeHead(404, { "content-type": "text/plain" }).end("Not Found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/tools/sse`;
}

describe("an SSE server whose message endpoint answers 404", () => {
  it("names the endpoint its stream announced and the usual causes (a path prefix it leaves out, instances)", async () => {
    const h = ctx.hub(ctx.home, { sse: entry({ url: await prefixedSseServer(), transport: "sse" }) });
    expect((await h.settled("sse")).lastError).toMatch(
      /^mcp_servers\.sse: Error POSTing to endpoint \(HTTP 404\): Not Found — the server's SSE stream named http:\/\/127\.0\.0\.1:\d+\/messages as its message endpoint, which does not know the session: a server behind a proxy under a path prefix \(here \/tools\) must announce its endpoint with that prefix \(or relative to the stream\), and one run as several instances needs each session routed to one instance$/,
    );
  });

  it(`names its host as the url's, as config.yaml writes it, when a $\{VAR} of .env gave the host and port`, async () => {
    // The endpoint is svc's text, named as the url's host is before the entry's secrets (the .env value among
    // them) are hidden from it, never `http://[redacted]/messages`.
    const url = new URL(await prefixedSseServer());
    ctx.home.write(
      "config.yaml",
      `mcp_servers:\n  sse:\n    url: "http://$\{MCP_HOSTPORT}/tools/sse"\n    transport: sse\n`,
    );
    ctx.home.write(".env", `MCP_HOSTPORT=${url.host}\n`);
    const { config } = loadConfig({ home: ctx.home.dir, env: {} });
    const h = ctx.hub(ctx.home, { sse: config.mcp_servers.sse as McpServerEntry });
    const host = `<the host of "http://$\{MCP_HOSTPORT}/tools/sse" (the value it gives is not shown)>`;
    expect((await h.settled("sse")).lastError).toBe(
      `mcp_servers.sse: Error POSTing to endpoint (HTTP 404): Not Found — the server's SSE stream named http://${host}:${url.port}/messages as its message endpoint, which does not know the session: a server behind a proxy under a path prefix (here /tools) must announce its endpoint with that prefix (or relative to the stream), and one run as several instances needs each session routed to one instance`,
    );
  });
});

/**
 * A web server that moved its MCP endpoint: `/mcp` answers with a redirect to `target` (a path of its own, or
 * another origin), as a web framework's trailing-slash or canonical-host redirect does.
 */
async function redirectingServer(status: number, target: (port: number) => string): Promise<string> {
  const server: Server = createServer((req, res) => {
    const { port } = server.address() as AddressInfo;
    res.writeHead(req.url === "/mcp" ? status : 404, { location: target(port) }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe("a url the server redirects elsewhere", () => {
  it("names the address to write in url, not the MCP SDK's redirectPolicy option, which svc has no key for", async () => {
    const h = ctx.hub(ctx.home, {
      // 301 turns a POST into a GET, so it is not followed even within the url's origin.
      slash: entry({ url: await redirectingServer(301, () => "/mcp/") }),
      host: entry({ url: await redirectingServer(307, (port) => `http://localhost:${port}/mcp`) }),
    });
    const slash = (await h.settled("slash")).lastError ?? "";
    expect(slash).not.toContain("redirectPolicy");
    expect(slash).toMatch(
      /^mcp_servers\.slash: .*Redirect to http:\/\/127\.0\.0\.1:(\d+)\/mcp\/ not followed \(HTTP 301\) — the server redirects to http:\/\/127\.0\.0\.1:\1\/mcp\/, and svc follows a redirect only when it keeps the request's method \(307, 308\) and the url's origin: if that is the server's MCP endpoint, write it in mcp_servers\.slash\.url$/,
    );
    const host = (await h.settled("host")).lastError ?? "";
    expect(host).not.toContain("redirectPolicy");
    expect(host).toMatch(
      /^mcp_servers\.host: .*Redirect to http:\/\/localhost:\d+\/mcp not followed \(HTTP 307\) — the server redirects to http:\/\/localhost:\d+\/mcp, and svc follows .* write it in mcp_servers\.host\.url$/,
    );
  });

  it("an SSE stream's redirect to another origin is said as the origin's, which alone stopped it", async () => {
    // The stream's GET follows a 302 within the url's origin: to another origin it is not followed.
    const h = ctx.hub(ctx.home, {
      moved: entry({
        url: await redirectingServer(302, (port) => `http://localhost:${port}/sse`),
        transport: "sse",
      }),
    });
    const moved = (await h.settled("moved")).lastError ?? "";
    expect(moved).toMatch(
      /^mcp_servers\.moved: .*Redirect to http:\/\/localhost:\d+\/sse not followed \(HTTP 302\) — the server redirects to http:\/\/localhost:\d+\/sse, and svc follows the SSE stream's redirect only within the url's origin \(a message POST's only when it also keeps its method: 307, 308\): if that is the server's MCP endpoint, write it in mcp_servers\.moved\.url$/,
    );
  });
});

/** A JSON API that is not an MCP server: every request gets `{"ok":true}`. */
async function jsonApiServer(): Promise<string> {
  const server: Server = createServer(async (req, res) => {
    for await (const _ of req);
    res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
}

/** A web app whose every answer says JSON but is `body` (nothing, or plain text), as a stub or a health route answers. */
async function notJsonServer(body: string): Promise<string> {
  const server: Server = createServer(async (req, res) => {
    for await (const _ of req);
    res.writeHead(200, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe("an answer that says JSON but is none", () => {
  it("says the answer is not JSON and what to check, not only the parser's words", async () => {
    const h = ctx.hub(ctx.home, {
      empty: entry({ url: await notJsonServer("") }),
      ok: entry({ url: await notJsonServer("OK") }),
    });
    expect((await h.settled("empty")).lastError).toBe(
      "mcp_servers.empty: the server's answer is not valid JSON (Unexpected end of JSON input) — check that the url is the server's MCP endpoint",
    );
    expect((await h.settled("ok")).lastError).toBe(
      `mcp_servers.ok: the server's answer is not valid JSON (Unexpected token 'O', "OK" is not valid JSON) — check that the url is the server's MCP endpoint`,
    );
  });
});

describe("an answer of the wrong shape", () => {
  it("is one line saying what was expected and what came, not the validation's JSON", async () => {
    const h = ctx.hub(ctx.home, {
      api: entry({ url: await jsonApiServer() }),
      list: entry({
        command: process.execPath,
        args: [join(import.meta.dirname, "../../fixtures/mcp/malformed-list-server.mjs")],
      }),
    });
    expect((await h.settled("api")).lastError).toBe(
      'mcp_servers.api: the server\'s answer is not a JSON-RPC message (no "jsonrpc": "2.0") — check that the url is the server\'s MCP endpoint',
    );
    expect((await h.settled("list")).lastError).toBe(
      "the server's tools/list result is malformed: tools: expected array, received string",
    );
  });
});

describe("a content block of a type MCP does not define", () => {
  it("is a line naming its type, not a failed call", async () => {
    const h = ctx.hub(ctx.home, {
      odd: entry({
        command: process.execPath,
        args: [join(import.meta.dirname, "../../fixtures/mcp/malformed-list-server.mjs"), "--bad-schemas"],
      }),
    });
    expect(await h.settled("odd")).toMatchObject({ state: "connected" });
    expect(text(await h.call("odd", "fine", { block: "Text" }))).toBe(
      '[content block of type "Text" — not shown: svc does not read this MCP content type]',
    );
    expect(text(await h.call("odd", "fine", { block: "text" }))).toBe("ran fine");
  });
});

describe("a tool whose inputSchema no model API takes", () => {
  it("is left out and reported, so the server's other tools still reach the agent", async () => {
    const h = ctx.hub(ctx.home, {
      odd: entry({
        command: process.execPath,
        args: [join(import.meta.dirname, "../../fixtures/mcp/malformed-list-server.mjs"), "--bad-schemas"],
      }),
    });
    const status = await h.settled("odd");
    expect(status).toMatchObject({ state: "connected", toolCount: 1 });
    expect(h.tools().map((t) => t.name)).toEqual(["mcp__odd__fine"]);
    expect(status.warnings).toEqual([
      'odd: "broken" is not registered: its inputSchema is not a valid JSON Schema: properties.q.type must be equal to one of the allowed values — a model API would refuse every run offered it; fix the server, or leave it out with tools.exclude',
      'odd: "listy" is not registered: its inputSchema has type "array", not "object" (tool arguments are an object) — a model API would refuse every run offered it; fix the server, or leave it out with tools.exclude',
      'odd: "texty" is not registered: its inputSchema is "any text", not a JSON Schema object — a model API would refuse every run offered it; fix the server, or leave it out with tools.exclude',
    ]);
    expect(text(await h.call("odd", "fine", { q: "x" }))).toBe("ran fine");
    // Called by its own name (svc mcp call): the reason, not "no tool is registered".
    await expect(h.call("odd", "listy", {})).rejects.toThrow(
      /^mcp_servers\.odd: "listy" is not registered: its inputSchema has type "array"/,
    );
  });
});

describe("a tool listed without inputSchema, or with a description or annotations that are no text or object", () => {
  it("is registered (without arguments, description or annotations), and the server's other tools with it", async () => {
    const h = ctx.hub(ctx.home, {
      bare: entry({
        command: process.execPath,
        args: [join(import.meta.dirname, "../../fixtures/mcp/malformed-list-server.mjs"), "--bare-tool"],
      }),
    });
    const status = await h.settled("bare");
    expect(status).toMatchObject({ state: "connected", toolCount: 3 });
    expect(h.tools().map((t) => [t.name, t.inputSchema, t.description, t.annotations])).toEqual([
      ["mcp__bare__fine", { type: "object", properties: { q: { type: "string" } } }, undefined, undefined],
      ["mcp__bare__bare", { type: "object" }, undefined, undefined],
      ["mcp__bare__numbered", { type: "object" }, undefined, undefined],
    ]);
    expect(text(await h.call("bare", "bare", {}))).toBe("ran bare");
    // svc mcp tools prints them (a description that was a number stopped it: "text.replace is not a function").
    expect(formatTools(h.tools(), {})).toContain("mcp__bare__numbered  numbered");
  });
});

describe("an initialize answer that writes the fields it leaves unset as null", () => {
  it("connects: a capability, flag, instructions or serverInfo field sent as null counts as left out", async () => {
    const h = ctx.hub(ctx.home, {
      plain: entry({
        command: process.execPath,
        args: [
          join(import.meta.dirname, "../../fixtures/mcp/malformed-list-server.mjs"),
          "--bare-tool",
          "--null-initialize",
        ],
      }),
      paged: entry({
        command: process.execPath,
        args: [
          join(import.meta.dirname, "../../fixtures/mcp/malformed-list-server.mjs"),
          "--null-cursors",
          "--null-initialize",
        ],
        tools: { resources: true, prompts: true },
      }),
    });
    expect(await h.settled("plain")).toMatchObject({ state: "connected", toolCount: 3 });
    expect(text(await h.call("plain", "bare", {}))).toBe("ran bare");
    // resources: null and prompts: null are capabilities not offered; objects of null flags are offered.
    expect(await h.settled("paged")).toMatchObject({ state: "connected" });
    expect(h.toolsOf("paged").map((t) => t.original)).toEqual([
      "fine",
      "second",
      "list_resources",
      "read_resource",
      "list_prompts",
      "get_prompt",
    ]);
  });
});

describe("an initialize answer without serverInfo, without its version, or with icons of an older draft", () => {
  it("connects: serverInfo is for display only (svc reads none of it), and the tools are registered", async () => {
    const args = (flag: string) => [
      join(import.meta.dirname, "../../fixtures/mcp/malformed-list-server.mjs"),
      "--bare-tool",
      flag,
    ];
    const h = ctx.hub(ctx.home, {
      unversioned: entry({ command: process.execPath, args: args("--unversioned") }),
      anonymous: entry({ command: process.execPath, args: args("--no-server-info") }),
      iconic: entry({ command: process.execPath, args: args("--text-icon-sizes") }),
    });
    expect(await h.settled("iconic")).toMatchObject({ state: "connected", toolCount: 3 });
    expect(await h.settled("unversioned")).toMatchObject({ state: "connected", toolCount: 3 });
    expect(await h.settled("anonymous")).toMatchObject({ state: "connected", toolCount: 3 });
    expect(text(await h.call("anonymous", "bare", {}))).toBe("ran bare");
  });
});

/**
 * A hand-written Streamable HTTP server whose every answer carries both result and error, the unused one
 * null (a Go response struct without omitempty): as a POST's JSON body, or with `sse`, as the one event of
 * its response stream.
 */
async function bothMembersServer(sse: boolean | "legacy"): Promise<string> {
  const streams: ServerResponse[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    // The legacy SSE transport: the stream names the message endpoint, whose POSTs are answered on it.
    if (sse === "legacy" && req.method === "GET") {
      streams.push(res.writeHead(200, { "content-type": "text/event-stream" }));
      res.write("event: endpoint\ndata: /messages\n\n");
      return;
    }
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const message = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    if (message.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    const results: Record<string, unknown> = {
      initialize: {
        protocolVersion: message.params?.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "go", version: "1.0.0" },
      },
      "tools/list": { tools: [{ name: "echo", inputSchema: { type: "object" } }] },
      "tools/call": { content: [{ type: "text", text: "ran echo" }] },
    };
    const result = results[message.method];
    const answer = JSON.stringify({
      jsonrpc: "2.0",
      id: message.id,
      result: result ?? null,
      error: result === undefined ? { code: -32601, message: "method not found" } : null,
    });
    if (sse === "legacy") {
      res.writeHead(202).end();
      streams.at(-1)?.write(`event: message\ndata: ${answer}\n\n`);
    } else if (sse)
      res.writeHead(200, { "content-type": "text/event-stream" }).end(`event: message\ndata: ${answer}\n\n`);
    else res.writeHead(200, { "content-type": "application/json" }).end(answer);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        for (const stream of streams) stream.destroy();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/${sse === "legacy" ? "sse" : "mcp"}`;
}

describe("answers that carry both result and error, the unused one null (a Go struct without omitempty)", () => {
  it("are read as the member that is not null: the server connects and its calls answer", async () => {
    const h = ctx.hub(ctx.home, {
      both: entry({
        command: process.execPath,
        args: [
          join(import.meta.dirname, "../../fixtures/mcp/malformed-list-server.mjs"),
          "--bare-tool",
          "--both-members",
        ],
      }),
      json: entry({ url: await bothMembersServer(false) }),
      sse: entry({ url: await bothMembersServer(true) }),
      legacy: entry({ url: await bothMembersServer("legacy"), transport: "sse" }),
    });
    expect(await h.settled("both")).toMatchObject({ state: "connected", toolCount: 3 });
    expect(await h.call("both", "bare", {})).toEqual({ content: [{ type: "text", text: "ran bare" }] });
    // Its requests and notifications (params: null, a notification's id: null) are read too: svc answers
    // its ping, and its tools/list_changed has the tools listed again.
    expect(await h.call("both", "fine", {})).toEqual({
      content: [{ type: "text", text: "ran fine (ping answered)" }],
    });
    await vi.waitFor(() => expect(h.toolsOf("both").map((t) => t.original)).toContain("added"), {
      timeout: 5000,
    });
    for (const server of ["json", "sse", "legacy"]) {
      expect(await h.settled(server)).toMatchObject({ state: "connected", toolCount: 1 });
      expect(await h.call(server, "echo", {})).toEqual({ content: [{ type: "text", text: "ran echo" }] });
    }
  });
});

describe("lists whose last page ends with nextCursor: null, with optional fields null", () => {
  it("are read to the end for the tools, list_resources and list_prompts alike, the items as sent", async () => {
    const h = ctx.hub(ctx.home, {
      paged: entry({
        command: process.execPath,
        args: [join(import.meta.dirname, "../../fixtures/mcp/malformed-list-server.mjs"), "--null-cursors"],
        tools: { resources: true, prompts: true },
      }),
    });
    expect(await h.settled("paged")).toMatchObject({ state: "connected" });
    expect(h.tools().map((t) => t.name)).toEqual([
      "mcp__paged__fine",
      "mcp__paged__second",
      "mcp__paged__list_resources",
      "mcp__paged__read_resource",
      "mcp__paged__list_prompts",
      "mcp__paged__get_prompt",
    ]);
    // The SDK's own list schemas take a cursor or a description that is text or absent: null failed the call.
    expect(JSON.parse(text(await h.call("paged", "list_resources", {})))).toEqual({
      resources: [
        { uri: "note://one", name: "one" },
        { uri: "note://two", name: "two", description: null, mimeType: null },
      ],
      resourceTemplates: [{ uriTemplate: "note://{id}", name: "note" }],
    });
    expect(JSON.parse(text(await h.call("paged", "list_prompts", {})))).toEqual({
      prompts: [{ name: "first-prompt" }, { name: "second-prompt", description: null, arguments: null }],
    });
    // tools/call: isError, structuredContent and a block's annotations sent as null count as left out; the
    // tool's own data keeps its nulls. An image's mimeType sent as null is what its bytes show.
    expect(await h.call("paged", "second", {})).toEqual({
      content: [
        { type: "text", text: "ran second" },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
        { type: "audio", data: "AAAA", mimeType: "application/octet-stream" },
      ],
    });
    expect(await h.call("paged", "fine", {})).toEqual({
      content: [{ type: "text", text: "ran fine" }],
      structuredContent: { value: null },
    });
    // resources/read and prompts/get: a field sent as null counts as left out.
    expect(JSON.parse(text(await h.call("paged", "read_resource", { uri: "note://two" })))).toEqual({
      contents: [{ uri: "note://two", text: "note text" }],
    });
    expect(JSON.parse(text(await h.call("paged", "get_prompt", { name: "second-prompt" })))).toEqual({
      messages: [{ role: "user", content: { type: "text", text: "prompt text" } }],
    });
  });
});
