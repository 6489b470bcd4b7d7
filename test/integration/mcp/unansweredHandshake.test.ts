import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { svc as svcIn } from "../cli/svc.js";

/**
 * A server that takes the connection (a process that reads its stdin, an HTTP endpoint that takes the
 * POST, an SSE stream that names its endpoint) but never answers the handshake, or an SSE server whose
 * event stream never opens after the preflight (so the handshake is never sent): the timeout says which
 * request went unanswered, what to check for the transport (the command, the url and the transport it
 * speaks) and which wait to raise — in `svc mcp test`, `svc mcp list`'s check and the gateway's log
 * (docs/mcp.md, A process that exits, or never answers the handshake). Real sockets on 127.0.0.1; the
 * peers never answer, so the waits are short.
 */

const STDIO =
  "the server did not answer the handshake (initialize, MCP's first request): check that command and args start an MCP server that speaks stdio, JSON-RPC on its stdin and stdout";
const HTTP =
  "the server did not answer the handshake (initialize, MCP's first request): check that url is the endpoint of an MCP server that speaks Streamable HTTP, not legacy SSE (for that, set transport: sse)";
const SSE =
  "the server did not answer the handshake (initialize, MCP's first request): check that url is the event stream of an MCP server that speaks the legacy SSE transport, not Streamable HTTP (for that, set transport: http)";
const UNOPENED =
  "the event stream did not open: the server did not answer the GET of its url that opens it (so the handshake, initialize, was never sent): check that url is the event stream of an MCP server that speaks the legacy SSE transport, not Streamable HTTP (for that, set transport: http)";
/**
 * The wait given to the SSE peers: 5 s, not less. The SSE peer must still open its stream (headers and the
 * `endpoint` event, from this test's process) within it for svc to reach the handshake, and on a loaded
 * CI machine 1 s was not always enough, nor 3 s beside the other MCP and CLI files on a machine shared with
 * other work (2026-12-06): svc then rightly said the stream did not open.
 */
const WAIT = 5;
/**
 * The wait given to the stdio and Streamable HTTP peers, which need none: svc's handshake is its first
 * write to them (the process's stdin, a POST with no preflight before it), so however little of it they
 * took when the time runs out, the handshake went unanswered and svc says so.
 */
const SHORT_WAIT = 1;
const waitOf = (name: string) => (name === "quiet" || name === "held" ? SHORT_WAIT : WAIT);
const slow = (bound: string) => ` — or, for a server slow to start, raise ${bound}`;

const held = new Set<ServerResponse>();
let http: Server;
let sse: Server;
let unopened: Server;
let gateway: Promise<TestGateway> | undefined;

function listening(server: Server): Promise<number> {
  return new Promise((done) =>
    server.listen(0, "127.0.0.1", () => done((server.address() as AddressInfo).port)),
  );
}

/** `connectTimeout`: each peer's `connect_timeout`, the peer's own wait (`waitOf`) when not given. */
function entries(httpPort: number, ssePort: number, unopenedPort: number, connectTimeout?: number) {
  const bound = (name: string) => connectTimeout ?? waitOf(name);
  return {
    // Reads its stdin and never writes; it ends when svc closes its stdin.
    quiet: {
      command: process.execPath,
      args: ["-e", "process.stdin.resume()"],
      connect_timeout: bound("quiet"),
    },
    // skip_preflight: the handshake is the first request (the preflight's own stage is cancelledConnect's).
    held: { url: `http://127.0.0.1:${httpPort}/mcp`, skip_preflight: true, connect_timeout: bound("held") },
    stream: {
      url: `http://127.0.0.1:${ssePort}/sse`,
      transport: "sse",
      skip_preflight: true,
      connect_timeout: bound("stream"),
    },
    // With the preflight: its GET is answered, the stream's own GET never is.
    unopened: {
      url: `http://127.0.0.1:${unopenedPort}/sse`,
      transport: "sse",
      connect_timeout: bound("unopened"),
    },
  };
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

let httpPort: number;
let ssePort: number;
let unopenedPort: number;

beforeAll(async () => {
  // Takes every request and never answers it.
  http = createServer((req, res) => {
    req.resume();
    held.add(res);
  });
  // Opens the stream and names the endpoint; takes each POST (202) and never answers it on the stream.
  sse = createServer((req, res) => {
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("event: endpoint\ndata: /messages\n\n");
      held.add(res);
      return;
    }
    req.resume();
    req.on("end", () => res.writeHead(202).end("Accepted"));
  });
  // Answers the preflight's GET (which accepts JSON too) with an event stream's headers and ends it; the
  // transport's GET of its stream (text/event-stream alone) is taken and never answered, not even its headers.
  unopened = createServer((req, res) => {
    req.resume();
    if (req.method === "GET" && (req.headers.accept ?? "").includes("application/json")) {
      res.writeHead(200, { "content-type": "text/event-stream" }).end();
      return;
    }
    held.add(res);
  });
  [httpPort, ssePort, unopenedPort] = await Promise.all([
    listening(http),
    listening(sse),
    listening(unopened),
  ]);
  // Started here, so its connects wait out their peers while the commands below wait out theirs; its
  // log is read by the last test.
  gateway = startTestGateway({ config: { mcp_servers: entries(httpPort, ssePort, unopenedPort) } });
  // A failed start is the last test's failure, not an unhandled rejection meanwhile.
  gateway.catch(() => {});
});

afterAll(async () => {
  await (await gateway?.catch(() => undefined))?.stop();
  for (const res of held) res.destroy();
  http?.closeAllConnections();
  sse?.closeAllConnections();
  unopened?.closeAllConnections();
  await Promise.all([http, sse, unopened].map((s) => new Promise((done) => s?.close(done))));
});

/**
 * Runs `svc <args>` in a home of its own holding `servers`, in this worker. The tests below run one after
 * another (each mostly waits out its peer's timeout, 17 s in all): run at once (it.concurrent), all but one
 * of their commands had to start a process of its own, ~0.35 CPU-s each.
 */
async function svcOwnHome(servers: Record<string, unknown>, args: string[]) {
  const own = tempHome();
  try {
    own.write("config.yaml", stringify({ mcp_servers: servers }));
    return await svcIn(own, args);
  } finally {
    own.cleanup();
  }
}

describe("a server that never answers the handshake", () => {
  it.each([
    ["stdio", "quiet", STDIO],
    ["Streamable HTTP", "held", HTTP],
    ["SSE", "stream", SSE],
    ["SSE whose event stream never opens", "unopened", UNOPENED],
  ])(
    "%s: svc mcp test says what to check and to raise connect_timeout",
    async (_, name, why) => {
      const res = await svcOwnHome(entries(httpPort, ssePort, unopenedPort), ["mcp", "test", name]);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(
        `mcp_servers.${name}: connect timed out after ${waitOf(name)} s (connect_timeout) — ${why}${slow("connect_timeout")}\n`,
      );
    },
    20_000,
  );

  it("svc mcp list's check names --timeout, the wait that ran out", async () => {
    const res = await svcOwnHome(entries(httpPort, ssePort, unopenedPort, 30), [
      "mcp",
      "list",
      "--timeout",
      String(WAIT),
    ]);
    for (const [name, why] of [
      ["quiet", STDIO],
      ["held", HTTP],
      ["stream", SSE],
      ["unopened", UNOPENED],
    ])
      expect(res.stdout.split("\n").find((line) => line.startsWith(`${name} `))).toMatch(
        new RegExp(
          `failed: no answer within ${WAIT} s \\(--timeout\\) — ${escaped(`${why}${slow("--timeout")}`)}$`,
        ),
      );
  }, 20_000);

  it("the gateway's log says the same at each failed connect", async () => {
    const gw = await (gateway as Promise<TestGateway>);
    await vi.waitFor(
      () => {
        const warned = gw.logs().map((l) => l.msg);
        for (const [name, why] of [
          ["quiet", STDIO],
          ["held", HTTP],
          ["stream", SSE],
          ["unopened", UNOPENED],
        ] as const)
          expect(warned).toContain(
            `[mcp] mcp_servers.${name}: connect timed out after ${waitOf(name)} s (connect_timeout) — ${why}${slow("connect_timeout")}`,
          );
      },
      { timeout: 20_000, interval: 50 },
    );
  }, 40_000);
});
