import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it, vi } from "vitest";
import { SimulatedClock } from "xstate";
import { stringify } from "yaml";
import { loadConfig } from "../../../src/config/load.js";
import type { McpServerEntry } from "../../../src/config/sections/mcp.js";
import { tempHome } from "../../helpers/home.js";
import { svc } from "../cli/svc.js";
import { entry, readRpcRequest, useHubs, useLoopbackHttp } from "./harness.js";

/**
 * A connect given up while the era sequence waits on its second request (docs/mcp.md, Protocol eras) names
 * both requests, as the error of a sequence whose second request failed does: under `auto`, initialize
 * refused (a 2026-07-28-only server's -32601) and the server/discover probe unanswered; under `stateless`,
 * server/discover unanswered within its half of connect_timeout and the legacy initialize retry unanswered
 * too — not "the server did not answer the handshake (initialize …)" for a server that answered it, nor
 * server/discover alone. Raw node:http servers on 127.0.0.1 (an SDK server neither refuses initialize so
 * nor leaves a request unanswered); the connects are given up on a simulated clock, on which the hub also
 * measures how long the last request waited.
 */

const ctx = useHubs();
const serve = useLoopbackHttp();

const REFUSED = "MCP error -32601: Method not found";
const HTTP_CHECK =
  "check that url is the endpoint of an MCP server that speaks Streamable HTTP, not legacy SSE (for that, set transport: sse)";

/**
 * A server that answers `answered` methods with a JSON-RPC -32601 (as a server without them does) and takes
 * every other request without answering it; `asked` lists the methods as they came.
 */
async function server(
  answered: readonly string[],
  refusal: (port: number) => string = () => "Method not found",
): Promise<{ url: string; asked: string[] }> {
  const asked: string[] = [];
  const port = await serve(async (req: IncomingMessage, res: ServerResponse) => {
    const message = await readRpcRequest(req, res);
    if (message === undefined) return;
    asked.push(message.method);
    if (!answered.includes(message.method)) return;
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        jsonrpc: "2.0",
        id: message.id,
        error: { code: -32601, message: refusal(port) },
      }),
    );
  });
  return { url: `http://127.0.0.1:${port}/mcp`, asked };
}

/**
 * A server of another revision: its server/discover lists only 2099-01-01 (or `versions`), and it takes every
 * other request without answering it (the legacy initialize retry too), or refuses `refused` methods with a
 * -32601.
 */
async function futureServer(
  versions: readonly string[] = ["2099-01-01"],
  refused: readonly string[] = [],
): Promise<{ url: string; asked: string[] }> {
  const asked: string[] = [];
  const port = await serve(async (req: IncomingMessage, res: ServerResponse) => {
    const message = await readRpcRequest(req, res);
    if (message === undefined) return;
    asked.push(message.method);
    if (refused.includes(message.method)) {
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          jsonrpc: "2.0",
          id: message.id,
          error: { code: -32601, message: "Method not found" },
        }),
      );
      return;
    }
    if (message.method !== "server/discover") return;
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        jsonrpc: "2.0",
        id: message.id,
        result: {
          supportedVersions: versions,
          capabilities: {},
          serverInfo: { name: "x", version: "1" },
        },
      }),
    );
  });
  return { url: `http://127.0.0.1:${port}/mcp`, asked };
}

const SPEAKS =
  "svc speaks 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, 2024-10-07 (and 2026-07-28 through server/discover): configure the server to offer one of them, or update svc";

/** A hub whose connects are given up, and whose waits are measured, on `clock`. */
function hubOn(clock: SimulatedClock, servers: Record<string, ReturnType<typeof entry>>) {
  return ctx.hub(ctx.home, servers, { clock, now: () => clock.now() });
}

const waitFor = (check: () => void) => vi.waitFor(check, { timeout: 10_000, interval: 20 });

/**
 * The status of a stateless connect (connect_timeout 4) of `name` to `peer`, given up once server/discover
 * and the legacy initialize retry were both asked and the 4 s passed on a simulated clock.
 */
async function givenUpStateless(name: string, peer: { readonly url: string; readonly asked: string[] }) {
  const clock = new SimulatedClock();
  const h = hubOn(clock, { [name]: entry({ url: peer.url, protocol: "stateless", connect_timeout: 4 }) });
  await waitFor(() => expect(peer.asked).toEqual(["server/discover", "initialize"]));
  clock.increment(4000);
  return h.status()[0];
}

describe("a connect given up while the era sequence waits on its second request", () => {
  it("auto: names initialize refused and the server/discover probe unanswered, with its wait", async () => {
    const peer = await server(["initialize"]);
    const clock = new SimulatedClock();
    const h = hubOn(clock, { h2: entry({ url: peer.url, connect_timeout: 4 }) });
    await waitFor(() => expect(peer.asked).toEqual(["initialize", "server/discover"]));
    clock.increment(4000);
    expect(h.status()[0]).toMatchObject({
      state: "failed",
      lastError: `connect timed out after 4 s (connect_timeout) — initialize was refused (${REFUSED}), and the server/discover probe of the 2026-07-28 revision that protocol: auto tries next failed too (got no answer within 4 s) — check that this is an MCP server — or, for a server slow to answer, raise connect_timeout`,
    });
  });

  it("stateless: names server/discover unanswered within its half and the legacy initialize retry unanswered", async () => {
    const peer = await server([]);
    const clock = new SimulatedClock();
    // The probe's own wait (2 s, half of connect_timeout) runs on the system's timers; the connect's on the
    // simulated clock, moved by the probe's wait before the retry is sent, and by the rest after it.
    const h = hubOn(clock, { h3: entry({ url: peer.url, protocol: "stateless", connect_timeout: 4 }) });
    await waitFor(() => expect(peer.asked).toEqual(["server/discover"]));
    clock.increment(2000);
    await waitFor(() => expect(peer.asked).toEqual(["server/discover", "initialize"]));
    clock.increment(2000);
    expect(h.status()[0]).toMatchObject({
      state: "failed",
      lastError: `connect timed out after 4 s (connect_timeout) — server/discover failed (got no answer within 2 s) and the legacy initialize retry failed (got no answer within 2 s): ${HTTP_CHECK} — or, for a server slow to start, raise connect_timeout`,
    });
  });

  it("stateless: a probe refused is quoted, and the server is asked whether it speaks MCP", async () => {
    const peer = await server(["server/discover"]);
    expect(await givenUpStateless("h4", peer)).toMatchObject({
      state: "failed",
      lastError: `connect timed out after 4 s (connect_timeout) — server/discover failed (${REFUSED}) and the legacy initialize retry failed (got no answer within 4 s): check that this is an MCP server — or, for a server slow to answer, raise connect_timeout`,
    });
  });

  it("stateless: a probe listing only versions svc does not speak gets the versions svc speaks, not 'is this MCP?'", async () => {
    const peer = await futureServer();
    expect(await givenUpStateless("h7", peer)).toMatchObject({
      state: "failed",
      lastError: `connect timed out after 4 s (connect_timeout) — server/discover failed (server/discover lists 2099-01-01, not 2026-07-28) and the legacy initialize retry failed (got no answer within 4 s) — ${SPEAKS}`,
    });
  });

  it("stateless: a probe listing 2025-06-18 (which svc speaks) but not 2026-07-28 keeps the advice to raise connect_timeout", async () => {
    const peer = await futureServer(["2025-06-18"]);
    expect(await givenUpStateless("h8", peer)).toMatchObject({
      state: "failed",
      lastError:
        "connect timed out after 4 s (connect_timeout) — server/discover failed (server/discover lists 2025-06-18, not 2026-07-28) and the legacy initialize retry failed (got no answer within 4 s): its server/discover lists 2025-06-18, which svc speaks through initialize, so the server should have answered the retry — or, for a server slow to answer, raise connect_timeout",
    });
  });

  it("stateless: a probe listing 2025-06-18 and 2099-01-01, then the retry refused, gets no 'svc speaks' advice", async () => {
    const peer = await futureServer(["2099-01-01", "2025-06-18"], ["initialize"]);
    const clock = new SimulatedClock();
    const h = hubOn(clock, { h9: entry({ url: peer.url, protocol: "stateless", connect_timeout: 4 }) });
    await waitFor(() => expect(h.status()[0]?.state).toBe("failed"));
    const error = h.status()[0]?.lastError ?? "";
    expect(error).toContain("server/discover lists 2099-01-01, 2025-06-18, not 2026-07-28");
    expect(error).not.toContain("svc speaks");
    // Listing only versions svc does not speak, the same refusal ends with them.
    const other = await futureServer(["2099-01-01"], ["initialize"]);
    const h2 = hubOn(clock, { h10: entry({ url: other.url, protocol: "stateless", connect_timeout: 4 }) });
    await waitFor(() => expect(h2.status()[0]?.state).toBe("failed"));
    expect(h2.status()[0]?.lastError).toContain(`— ${SPEAKS}`);
  });

  it("auto: initialize refused, then a probe listing 2025-06-18 (which svc speaks), sends the reader to the server's initialize, not 'is this MCP?'", async () => {
    const peer = await futureServer(["2025-06-18"], ["initialize"]);
    const clock = new SimulatedClock();
    const h = hubOn(clock, { h11: entry({ url: peer.url, connect_timeout: 4 }) });
    await waitFor(() => expect(h.status()[0]?.state).toBe("failed"));
    expect(peer.asked).toEqual(["initialize", "server/discover"]);
    expect(h.status()[0]?.lastError).toBe(
      `mcp_servers.h11: initialize was refused (${REFUSED}), and the server/discover probe of the 2026-07-28 revision that protocol: auto tries next was answered: its server/discover lists 2025-06-18, which svc speaks through initialize, yet it refused initialize — check the server's initialize handling`,
    );
    // With a version svc does not speak beside it, the ones it speaks are named.
    const mixed = await futureServer(["2099-01-01", "2025-06-18"], ["initialize"]);
    const h2 = hubOn(clock, { h12: entry({ url: mixed.url, connect_timeout: 4 }) });
    await waitFor(() => expect(h2.status()[0]?.state).toBe("failed"));
    expect(h2.status()[0]?.lastError).toBe(
      `mcp_servers.h12: initialize was refused (${REFUSED}), and the server/discover probe of the 2026-07-28 revision that protocol: auto tries next was answered: its server/discover lists 2099-01-01, 2025-06-18, of which svc speaks 2025-06-18 through initialize, yet it refused initialize — check the server's initialize handling`,
    );
  });

  it("before the fallback, the first request alone is named, as before", async () => {
    const peer = await server([]);
    const clock = new SimulatedClock();
    const h = hubOn(clock, { h5: entry({ url: peer.url, protocol: "stateless", connect_timeout: 60 }) });
    await waitFor(() => expect(peer.asked).toEqual(["server/discover"]));
    clock.increment(60_000);
    expect(h.status()[0]?.lastError).toBe(
      `connect timed out after 60 s (connect_timeout) — the server did not answer the handshake (server/discover, MCP's first request): ${HTTP_CHECK} — or, for a server slow to start, raise connect_timeout`,
    );
  });
});

describe("a stateless probe refused in words that quote the url, the host a variable gave", () => {
  // The probe's refusal, told before the retry, was described with the entry's secrets hidden and nothing
  // named: a host from .env read "[redacted]" in the timeout's message, where one from the environment was
  // named as the host of the url config.yaml writes.
  it.each(["the environment", ".env"])(
    "from %s: the timeout's message names the host as written",
    async (where) => {
      const peer = await server(
        ["server/discover"],
        (port) => `Method not found at upstream http://127.0.0.1:${port}/x`,
      );
      const { host: hostPort, port } = new URL(peer.url);
      ctx.home.write(
        "config.yaml",
        stringify({
          mcp_servers: {
            web: {
              url: `http://$\{MCP_HOST}/mcp`,
              protocol: "stateless",
              connect_timeout: 4,
              skip_preflight: true,
            },
          },
        }),
      );
      const env = { PATH: process.env.PATH, ...(where === ".env" ? {} : { MCP_HOST: hostPort }) };
      if (where === ".env") ctx.home.write(".env", `MCP_HOST=${hostPort}\n`);
      const { config } = loadConfig({ home: ctx.home.dir, env });
      const clock = new SimulatedClock();
      const h = ctx.hub(
        ctx.home,
        { web: config.mcp_servers.web as McpServerEntry },
        { clock, now: () => clock.now(), env },
      );
      await waitFor(() => expect(peer.asked).toEqual(["server/discover", "initialize"]));
      clock.increment(4000);
      const host = `<the host of "http://$\{MCP_HOST}/mcp" (the value it gives is not shown)>`;
      expect(h.status()[0]).toMatchObject({
        state: "failed",
        lastError: `connect timed out after 4 s (connect_timeout) — server/discover failed (MCP error -32601: Method not found at upstream http://${host}:${port}/x) and the legacy initialize retry failed (got no answer within 4 s): check that this is an MCP server — or, for a server slow to answer, raise connect_timeout`,
      });
    },
  );
});

describe("a stateless sequence that ends with an answer", () => {
  it("names the probe left unanswered by its wait, not the SDK's Request timed out", async () => {
    const peer = await server(["initialize"]);
    const h = ctx.hub(ctx.home, { h6: entry({ url: peer.url, protocol: "stateless", connect_timeout: 4 }) });
    const status = await h.settled("h6");
    expect(status.lastError).toBe(
      `mcp_servers.h6: server/discover failed (got no answer within 2 s) and the legacy initialize retry failed (${REFUSED})`,
    );
  }, 15_000);
});

describe("svc mcp test", () => {
  it("says the same of a server that refuses initialize and never answers server/discover", async () => {
    const peer = await server(["initialize"]);
    const home = tempHome();
    try {
      home.write("config.yaml", stringify({ mcp_servers: { h2: { url: peer.url, connect_timeout: 2 } } }));
      const res = await svc(home, ["mcp", "test", "h2"]);
      expect(res.code).toBe(1);
      // The probe's wait is what was left of the 2 s after the preflight and initialize, measured.
      expect(res.stderr).toMatch(
        /mcp_servers\.h2: connect timed out after 2 s \(connect_timeout\) — initialize was refused \(MCP error -32601: Method not found\), and the server\/discover probe of the 2026-07-28 revision that protocol: auto tries next failed too \(got no answer within \d+(\.\d)? s\) — check that this is an MCP server — or, for a server slow to answer, raise connect_timeout\n/,
      );
      expect(res.stderr).not.toContain("did not answer the handshake");
    } finally {
      home.cleanup();
    }
  }, 20_000);
});
