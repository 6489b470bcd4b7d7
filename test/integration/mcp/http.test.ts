import { afterEach, describe, expect, it, vi } from "vitest";
import { SimulatedClock } from "xstate";
import {
  type FixtureHttp,
  startDiscoverOnlyHttp,
  startSse,
  startStreamableHttp,
} from "../../fixtures/mcp/httpServers.js";
import { entry, text, useHubs } from "./harness.js";

const servers: FixtureHttp[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const ctx = useHubs();
const hub = ctx.hub;
async function serve<T extends FixtureHttp>(start: Promise<T>): Promise<T> {
  const s = await start;
  servers.push(s);
  return s;
}

describe("Streamable HTTP", () => {
  it("connects with headers rendered from .env and calls tools", async () => {
    const s = await serve(startStreamableHttp());
    ctx.home.write(".env", "MCP_TOKEN=tok-123\n");
    const h = hub(ctx.home, {
      web: entry({ url: s.url, headers: { Authorization: "Bearer ${MCP_TOKEN}" } }),
    });
    expect(await h.settled("web")).toMatchObject({ state: "connected", transport: "http", era: "legacy" });
    expect(text(await h.call("web", "echo", { text: "over http" }))).toBe("over http");
    expect(s.lastHeaders().authorization).toBe("Bearer tok-123");
  });

  it("ends its session with DELETE (with the configured headers) when it disconnects", async () => {
    const s = await serve(startStreamableHttp());
    const h = hub(ctx.home, { web: entry({ url: s.url, headers: { Authorization: "Bearer t" } }) });
    expect((await h.settled("web")).state).toBe("connected");
    expect(s.requests).not.toContain("DELETE /mcp");
    await h.stop();
    expect(s.requests.at(-1)).toBe("DELETE /mcp");
    expect(s.lastHeaders()).toMatchObject({
      authorization: "Bearer t",
      "mcp-session-id": expect.any(String),
    });
  });

  it("user:password@ in the url is sent as Basic credentials (fetch would refuse the url and quote it)", async () => {
    const [one, two] = [await serve(startStreamableHttp()), await serve(startStreamableHttp())];
    ctx.home.write(".env", "MCP_PW=s3cr%2Ft\n");
    const withUser = (url: string) => url.replace("http://", "http://me:${MCP_PW}@");
    const h = hub(ctx.home, {
      basic: entry({ url: withUser(one.url) }),
      header: entry({ url: withUser(two.url), headers: { Authorization: "Bearer configured" } }),
    });
    expect((await h.settled("basic")).state).toBe("connected");
    expect(one.lastHeaders().authorization).toBe(`Basic ${Buffer.from("me:s3cr/t").toString("base64")}`);
    expect((await h.settled("header")).state).toBe("connected");
    expect(two.lastHeaders().authorization).toBe("Bearer configured");
  });

  it("a url password holding a % not followed by two hex digits connects, sent as written (it failed as 'URI malformed')", async () => {
    const s = await serve(startStreamableHttp());
    ctx.home.write(".env", "MCP_PW=50%off-%zz\n");
    const h = hub(ctx.home, { basic: entry({ url: s.url.replace("http://", "http://me:${MCP_PW}@") }) });
    expect((await h.settled("basic")).state).toBe("connected");
    expect(s.lastHeaders().authorization).toBe(`Basic ${Buffer.from("me:50%off-%zz").toString("base64")}`);
  });

  it("a header whose rendered value has a line break fails closed without quoting the value", async () => {
    const s = await serve(startStreamableHttp());
    ctx.home.write(".env", 'MULTI_TOKEN="sekrit-1\\nsekrit-2"\n');
    const h = hub(ctx.home, {
      web: entry({ url: s.url, headers: { Authorization: "Bearer ${MULTI_TOKEN}" } }),
    });
    const status = await h.settled("web");
    expect(status.state).toBe("failed");
    expect(status.lastError).toMatch(
      /^mcp_servers\.web\.headers\.Authorization: the value rendered from \$\{\.\.\.\} contains a line break/,
    );
    expect(status.lastError).not.toContain("sekrit");
    expect(s.requests).toEqual([]);
  });

  it("an unset ${VAR} in url or headers fails closed naming it; the next connect re-renders", async () => {
    const s = await serve(startStreamableHttp());
    const h = hub(ctx.home, {
      web: entry({ url: s.url, headers: { Authorization: "Bearer ${LATER_TOKEN}" } }),
    });
    const failed = await h.settled("web");
    expect(failed.state).toBe("failed");
    expect(failed.lastError).toMatch(
      /mcp_servers\.web\.headers\.Authorization: \$\{LATER_TOKEN\} is not set/,
    );
    expect(s.requests).toEqual([]);
    ctx.home.write(".env", "LATER_TOKEN=now-set\n");
    expect(text(await h.call("web", "echo", { text: "again" }))).toBe("again");
    expect(s.lastHeaders().authorization).toBe("Bearer now-set");

    const u = hub(ctx.home, { u: entry({ url: `${s.url}?key=\${URL_KEY}` }) });
    expect((await u.settled("u")).lastError).toMatch(/mcp_servers\.u\.url: \$\{URL_KEY\} is not set/);
  });

  it("preflight fails fast on a non-MCP content type and suggests skip_preflight", async () => {
    const s = await serve(startStreamableHttp());
    const html = s.url.replace(/\/mcp$/, "/html");
    const h = hub(ctx.home, { page: entry({ url: html }) });
    const status = await h.settled("page");
    expect(status.state).toBe("failed");
    expect(status.lastError).toMatch(/content type "text\/html".*skip_preflight: true/);
    expect(s.requests.filter((r) => r.startsWith("POST"))).toEqual([]);

    const skipped = hub(ctx.home, { page: entry({ url: html, skip_preflight: true }) });
    const skip = await skipped.settled("page");
    expect(skip.state).toBe("failed");
    expect(skip.lastError).not.toMatch(/skip_preflight/);
    // The POST answered with the page too: said so with what to check, not the SDK's bare words.
    expect(skip.lastError).toBe(
      "mcp_servers.page: the server answered a POST with content type \"text/html; charset=utf-8\", not MCP's application/json or text/event-stream (a login page or a proxy in front of the server answers so) — check that the url is the server's MCP endpoint",
    );
    expect(s.requests.some((r) => r.startsWith("POST /html"))).toBe(true);
  });

  it("preflight of an SSE endpoint (GET only) answered with a page says what an SSE GET answers, not skip_preflight", async () => {
    const s = await serve(startStreamableHttp());
    const h = hub(ctx.home, { page: entry({ url: s.url.replace(/\/mcp$/, "/html"), transport: "sse" }) });
    const status = await h.settled("page");
    expect(status.state).toBe("failed");
    expect(status.lastError).toMatch(
      /answered GET with content type "text\/html", not an MCP endpoint — check the url: an SSE endpoint's GET answers text\/event-stream \(for a Streamable HTTP server, remove transport: sse\)$/,
    );
  });

  it("preflight lets a 405 HEAD through to the real connect", async () => {
    const s = await serve(startStreamableHttp());
    const h = hub(ctx.home, { web: entry({ url: s.url }) });
    expect((await h.settled("web")).state).toBe("connected");
    expect(s.requests[0]).toBe("HEAD /mcp");
  });

  it("after a session expiry mid-call: readOnlyHint tools are replayed, others return outcome_uncertain", async () => {
    const s = await serve(startStreamableHttp());
    const h = hub(ctx.home, { web: entry({ url: s.url }) });
    await h.settled("web");
    s.expireSessions();
    expect(text(await h.call("web", "echo", { text: "replayed" }))).toBe("replayed");
    s.expireSessions();
    await expect(h.call("web", "write-note", { text: "x" })).rejects.toMatchObject({
      code: "outcome_uncertain",
      message: expect.stringMatching(/verify its effect before calling it again/),
    });
    // The hub reconnected: the next call works on a fresh session.
    expect(text(await h.call("web", "add", { a: 1, b: 1 }))).toBe("2");
  });

  it("a server that answers 400 'No valid session ID provided' for a forgotten session (TypeScript SDK examples) counts as an expiry", async () => {
    const s = await serve(startStreamableHttp({ staleSessionStatus: 400 }));
    const h = hub(ctx.home, { web: entry({ url: s.url }) });
    await h.settled("web");
    s.expireSessions();
    expect(text(await h.call("web", "echo", { text: "replayed" }))).toBe("replayed");
    s.expireSessions();
    await expect(h.call("web", "write-note", { text: "x" })).rejects.toMatchObject({
      code: "outcome_uncertain",
    });
    expect(text(await h.call("web", "add", { a: 1, b: 1 }))).toBe("2");
  });

  it("a call in flight when its entry is reloaded is cut off with a message saying so, not replayed on the removed server", async () => {
    const s = await serve(startStreamableHttp());
    const h = hub(ctx.home, { web: entry({ url: s.url }) });
    await h.settled("web");
    const call = h.call("web", "slow", { ms: 5000 });
    await new Promise((r) => setTimeout(r, 200));
    await h.reload({ web: entry({ url: s.url, timeout: 100 }) });
    await expect(call).rejects.toMatchObject({
      code: "mcp_call",
      message:
        'mcp_servers.web: "slow" was cut off: the server was stopped or reloaded while the call ran; it may or may not have run',
    });
    expect(text(await h.call("web", "echo", { text: "new" }))).toBe("new");
  });

  it("a read-only replay that runs past timeout fails as a timeout naming the tool, not a raw SDK error", async () => {
    const s = await serve(startStreamableHttp());
    const h = hub(ctx.home, { web: entry({ url: s.url, timeout: 0.5 }) });
    await h.settled("web");
    s.expireSessions();
    await expect(h.call("web", "slow", { ms: 3000 })).rejects.toMatchObject({
      code: "mcp_timeout",
      message:
        'mcp_servers.web: "slow" did not answer within 0.5 s (timeout) — if the server is slow on this tool, raise mcp_servers.web.timeout in config.yaml; otherwise the server may be stuck: check its own log',
    });
  });
});

describe("Streamable HTTP: a large tool result", () => {
  it("arrives whole though its event comes in many chunks (it stalled the response stream until timeout)", async () => {
    const s = await serve(startStreamableHttp());
    // A timeout the stalled stream ran into, long enough for two megabytes over loopback on a busy machine.
    const h = hub(ctx.home, { web: entry({ url: s.url, timeout: 60 }) });
    await h.settled("web");
    const big = "large-result-".repeat(160_000);
    expect(text(await h.call("web", "echo", { text: big }))).toBe(big);
  }, 90_000);
});

describe("keepalive against a real server (simulated clock)", () => {
  it("pings every keepalive_interval; when the server goes away the ping fails and the hub reconnects", async () => {
    const s = await serve(startStreamableHttp());
    const clock = new SimulatedClock();
    const h = hub(ctx.home, { web: entry({ url: s.url }) }, { clock });
    await h.settled("web");
    const posts = () => s.requests.filter((r) => r.startsWith("POST")).length;
    const before = posts();
    clock.increment(179_999);
    await new Promise((r) => setTimeout(r, 100));
    expect(posts()).toBe(before);
    clock.increment(1);
    await vi.waitFor(() => expect(posts()).toBe(before + 1), { timeout: 10_000, interval: 20 });
    await s.close();
    // The first ping's answer may still be on its way: until it lands, the machine is pinging and the
    // next interval is not armed yet. Move the clock again while the status still says connected.
    await vi.waitFor(
      () => {
        if (h.status()[0]?.state === "connected") clock.increment(180_000);
        const status = h.status()[0];
        expect(status?.state).toBe("reconnecting");
        expect(status?.lastError).toMatch(/keepalive ping failed/);
      },
      { timeout: 5000, interval: 20 },
    );
  });
});

describe("SSE (transport: sse)", () => {
  it("connects over the legacy SSE transport and calls a tool", async () => {
    const s = await serve(startSse());
    ctx.home.write(".env", "SSE_TOKEN=sse-tok\n");
    const h = hub(ctx.home, {
      old: entry({ url: s.url, transport: "sse", headers: { "X-Api-Key": "${SSE_TOKEN}" } }),
    });
    expect(await h.settled("old")).toMatchObject({ state: "connected", transport: "sse" });
    expect(text(await h.call("old", "echo", { text: "sse" }))).toBe("sse");
    expect(s.requests.some((r) => r.startsWith("GET /sse"))).toBe(true);
    expect(s.lastHeaders()["x-api-key"]).toBe("sse-tok");
  });
});

describe("stateless era over HTTP (a discover-only server)", () => {
  it("auto: initialize answered with HTTP 400/-32022 → server/discover; requests carry the version", async () => {
    const s = await serve(startDiscoverOnlyHttp());
    const h = hub(ctx.home, { d: entry({ url: s.url }) });
    expect(await h.settled("d")).toMatchObject({ state: "connected", era: "stateless" });
    expect(text(await h.call("d", "shout", { text: "quiet" }))).toBe("QUIET");
    expect(s.methods.slice(0, 3)).toEqual(["initialize", "server/discover", "tools/list"]);
  });

  it("stateless: server/discover is the first message, with MCP-Protocol-Version (the server refuses it without)", async () => {
    const s = await serve(startDiscoverOnlyHttp());
    const h = hub(ctx.home, { d: entry({ url: s.url, protocol: "stateless" }) });
    expect((await h.settled("d")).era).toBe("stateless");
    expect(s.methods[0]).toBe("server/discover");
  });

  it("when both eras are refused, the error quotes both answers whole and says what to check (auto and stateless)", async () => {
    const s = await serve(startDiscoverOnlyHttp({ refuseDiscover: true }));
    const h = hub(ctx.home, { a: entry({ url: s.url }), st: entry({ url: s.url, protocol: "stateless" }) });
    const refused =
      'Streamable HTTP error: Error POSTing to endpoint: {"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"]}}} (HTTP 400)';
    const notFound =
      'Streamable HTTP error: Error POSTing to endpoint: {"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}} (HTTP 404)';
    expect((await h.settled("a")).lastError).toBe(
      `mcp_servers.a: initialize was refused (${refused}), and the server/discover probe of the 2026-07-28 revision that protocol: auto tries next failed too (${notFound}) — check that this is an MCP server — no MCP endpoint at this url: check its path (often /mcp, or /sse for SSE servers)`,
    );
    expect((await h.settled("st")).lastError).toBe(
      `mcp_servers.st: server/discover failed (${notFound}) and the legacy initialize retry failed (${refused})`,
    );
  });

  it("oauth without a provider fails with a clear status", async () => {
    const s = await serve(startStreamableHttp());
    const h = hub(ctx.home, { o: entry({ url: s.url, auth: "oauth" }) });
    expect((await h.settled("o")).lastError).toMatch(/OAuth support is not available/);
  });
});
