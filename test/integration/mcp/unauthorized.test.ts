import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProtectedMcp, startProtectedMcp } from "../../fakes/authServer/mcpServer.js";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { entry, text, useHubs } from "./harness.js";

let mcp: ProtectedMcp;
/** The same server taking its key in `X-Api-Key` (the whole value), as API-key servers do. */
let keyed: ProtectedMcp;
/** The token the server takes besides "right-token": changed by a test, as a server revokes one. */
let rotating = "first-rotating-token";
beforeAll(async () => {
  const check = async (token: string) => token === "right-token" || token === rotating;
  mcp = await startProtectedMcp(() => "http://127.0.0.1:9", check);
  keyed = await startProtectedMcp(() => "http://127.0.0.1:9", check, "x-api-key");
});
afterAll(async () => {
  await mcp.close();
  await keyed.close();
});
const ctx = useHubs();

/** A server that answers 401: the status says so and what to configure (spec 5.1 headers, 5.3 auth: oauth). */
describe("a remote server that requires authorization", () => {
  it("Streamable HTTP and SSE without credentials: HTTP 401 and the keys to set", async () => {
    const h = ctx.hub(ctx.home, {
      plain: entry({ url: mcp.url }),
      sse: entry({ url: mcp.url, transport: "sse" }),
      // Its probe and its legacy retry both answered 401: the error quotes both, and the hint follows.
      stateless: entry({ url: mcp.url, protocol: "stateless" }),
    });
    const hint =
      'the server requires authorization: set an Authorization header under mcp_servers.%s.headers (e.g. "Bearer ${TOKEN}"), or for an OAuth login auth: oauth in the entry, then svc mcp login %s';
    const plain = await h.settled("plain");
    expect(plain.lastError).toMatch(/^mcp_servers\.plain: .*\(HTTP 401\) — /);
    // The user who adds auth: oauth is told the next step too (the login), not left to find it.
    expect(plain.lastError).toContain(hint.replaceAll("%s", "plain"));
    const sse = await h.settled("sse");
    expect(sse.lastError).toMatch(/^mcp_servers\.sse: .*401/);
    expect(sse.lastError).toContain(hint.replaceAll("%s", "sse"));
    const stateless = await h.settled("stateless");
    expect(stateless.lastError).toMatch(
      /^mcp_servers\.stateless: server\/discover failed \(.*\(HTTP 401\)\) and the legacy initialize retry failed \(.*\(HTTP 401\)\) — /,
    );
    expect(stateless.lastError).toContain(hint.replaceAll("%s", "stateless"));
  });

  it("with a refused Authorization header (or user:password@ in the url): check it, not set one", async () => {
    ctx.home.write(".env", "TOKEN=wrong-token\n");
    const h = ctx.hub(ctx.home, {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      bad: entry({ url: mcp.url, headers: { authorization: "Bearer ${TOKEN}" } }),
      basic: entry({ url: mcp.url.replace("http://", "http://me:wrong-pass@") }),
    });
    for (const name of ["bad", "basic"]) {
      const status = await h.settled(name);
      expect(status.lastError).toMatch(/\(HTTP 401\) — /);
      expect(status.lastError).toContain(
        `the server refused the credentials svc sent (the Authorization header of mcp_servers.${name}.headers, or the url's user:password@): check that the token is valid and not expired, or set auth: oauth if the server expects an OAuth login`,
      );
      expect(status.lastError).not.toContain("set an Authorization header");
    }
  });

  it("with an Authorization header whose ${VAR} is set but empty (TOKEN= in .env): names the variable", async () => {
    ctx.home.write(".env", "TOKEN=\n");
    const h = ctx.hub(ctx.home, {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      empty: entry({ url: mcp.url, headers: { Authorization: "Bearer ${TOKEN}" } }),
    });
    const status = await h.settled("empty");
    expect(status.lastError).toMatch(/\(HTTP 401\) — /);
    expect(status.lastError).toContain(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      "the Authorization header svc sent holds no credential (mcp_servers.empty.headers.Authorization): ${TOKEN} is set to an empty value (a line TOKEN= in the profile's .env, or an empty variable of the environment) — set the token there",
    );
    expect(status.lastError).not.toContain("check that the token is valid");
  });

  it("with a refused key in another credential header (X-Api-Key): names that header, not set an Authorization", async () => {
    ctx.home.write(".env", "MY_KEY=wrong-key\n");
    const h = ctx.hub(ctx.home, {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      keyed: entry({ url: keyed.url, headers: { "X-Api-Key": "${MY_KEY}" } }),
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      both: entry({
        url: keyed.url.replace("http://", "http://me:pw@"),
        headers: { "X-Api-Key": "${MY_KEY}" },
      }),
    });
    const status = await h.settled("keyed");
    expect(status.lastError).toMatch(/\(HTTP 401\) — /);
    expect(status.lastError).toContain(
      "the server refused the credentials svc sent (mcp_servers.keyed.headers.X-Api-Key): check that the key is valid and not expired, or set auth: oauth if the server expects an OAuth login",
    );
    expect(status.lastError).not.toContain("set an Authorization header");
    expect((await h.settled("both")).lastError).toContain(
      "the server refused the credentials svc sent (mcp_servers.both.headers.X-Api-Key, the url's user:password@): check",
    );
  });

  it("with an empty X-Api-Key (written so, or a ${VAR} set to nothing): says it holds no credential", async () => {
    ctx.home.write(".env", "MY_KEY=\n");
    const h = ctx.hub(ctx.home, {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      unset: entry({ url: keyed.url, headers: { "X-Api-Key": "${MY_KEY}" } }),
      blank: entry({ url: keyed.url, headers: { "X-Api-Key": "" } }),
    });
    expect((await h.settled("unset")).lastError).toContain(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      "(HTTP 401) — the X-Api-Key header svc sent holds no credential (mcp_servers.unset.headers.X-Api-Key): ${MY_KEY} is set to an empty value (a line MY_KEY= in the profile's .env, or an empty variable of the environment) — set the key there",
    );
    expect((await h.settled("blank")).lastError).toContain(
      "(HTTP 401) — the X-Api-Key header svc sent holds no credential (mcp_servers.blank.headers.X-Api-Key): config.yaml writes it without one — set the key there",
    );
  });

  it("with the right header it connects", async () => {
    ctx.home.write(".env", "TOKEN=right-token\n");
    const h = ctx.hub(ctx.home, {
      ok: entry({ url: mcp.url, headers: { Authorization: "Bearer ${TOKEN}" } }),
    });
    expect((await h.settled("ok")).state).toBe("connected");
  });
});

describe("a static token refused mid-session (expired or revoked after the connect)", () => {
  it("the call says the credentials were refused, and the next call reconnects with the token .env gives then", async () => {
    ctx.home.write(".env", `TOKEN=${rotating}\n`);
    const h = ctx.hub(ctx.home, {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      rot: entry({ url: mcp.url, headers: { Authorization: "Bearer ${TOKEN}" } }),
    });
    expect((await h.settled("rot")).state).toBe("connected");
    expect(text(await h.call("rot", "whoami", {}))).toBe("hello alice");
    // The server stops taking the token; the user puts the new one in .env.
    rotating = "second-rotating-token";
    ctx.home.write(".env", `TOKEN=${rotating}\n`);
    const refused =
      "(HTTP 401) — the server refused the credentials svc sent (the Authorization header of mcp_servers.rot.headers, or the url's user:password@): check that the token is valid and not expired, or set auth: oauth if the server expects an OAuth login";
    const failed = await h.call("rot", "whoami", {}).catch((err: Error & { code?: string }) => err);
    expect(failed).toMatchObject({ code: "mcp_call" });
    expect((failed as Error).message).toMatch(/^mcp_servers\.rot: "whoami" failed: .*\(HTTP 401\) — /);
    expect((failed as Error).message).toContain(refused);
    // The session could do nothing more with the refused token: the next call connects anew, with .env's.
    expect(text(await h.call("rot", "whoami", {}))).toBe("hello alice");
    expect(mcp.authHeaders.at(-1)).toBe("Bearer second-rotating-token");
  });
});

describe("a key in X-Api-Key refused mid-session (rotated after the connect)", () => {
  it("the call names the header the key was sent in", async () => {
    ctx.home.write(".env", `MY_KEY=${rotating}\n`);
    const h = ctx.hub(ctx.home, {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      rotkey: entry({ url: keyed.url, headers: { "x-api-key": "${MY_KEY}" } }),
    });
    expect((await h.settled("rotkey")).state).toBe("connected");
    rotating = "third-rotating-token";
    const failed = await h.call("rotkey", "whoami", {}).catch((err: Error) => err);
    expect((failed as Error).message).toMatch(
      /^mcp_servers\.rotkey: "whoami" failed: .*\(HTTP 401\) — the server refused the credentials svc sent \(mcp_servers\.rotkey\.headers\.x-api-key\): check that the key is valid/,
    );
  });
});

/** A real SDK server over SSE whose message endpoint takes only `Bearer <token()>` (the stream any). */
async function sseTakingToken(token: () => string): Promise<{ url: string; close(): void }> {
  const sessions = new Map<string, SSEServerTransport>();
  const read = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  };
  const server = createServer(async (req, res) => {
    if (req.method === "GET" && req.url?.startsWith("/sse")) {
      const transport = new SSEServerTransport("/messages", res);
      sessions.set(transport.sessionId, transport);
      await buildServer("legacy").connect(transport);
      return;
    }
    const sid = new URL(req.url ?? "/", "http://x").searchParams.get("sessionId") ?? "";
    const transport = sessions.get(sid);
    if (req.method !== "POST" || transport === undefined) {
      res.writeHead(404).end();
      return;
    }
    if (req.headers.authorization !== `Bearer ${token()}`) {
      res.writeHead(401).end("token expired");
      return;
    }
    await transport.handlePostMessage(req, res, await read(req));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

describe("a static token refused mid-session over SSE (its POST's 401 is only in the error's text)", () => {
  it("the call says the credentials were refused, and the next call reconnects with the token .env gives then", async () => {
    let token = "first-sse-token";
    const sse = await sseTakingToken(() => token);
    try {
      ctx.home.write(".env", `TOKEN=${token}\n`);
      const h = ctx.hub(ctx.home, {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
        ss: entry({ url: sse.url, transport: "sse", headers: { Authorization: "Bearer ${TOKEN}" } }),
      });
      expect((await h.settled("ss")).state).toBe("connected");
      expect(text(await h.call("ss", "echo", { text: "before" }))).toBe("before");
      token = "second-sse-token";
      ctx.home.write(".env", `TOKEN=${token}\n`);
      await expect(h.call("ss", "echo", { text: "refused" })).rejects.toThrow(
        /^mcp_servers\.ss: "echo" failed: Error POSTing to endpoint \(HTTP 401\): token expired — the server refused the credentials svc sent/,
      );
      expect(text(await h.call("ss", "echo", { text: "after" }))).toBe("after");
    } finally {
      sse.close();
    }
  });
});
