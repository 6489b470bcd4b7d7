import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeJob } from "../../../src/actors/oauth/context.js";
import { svcPaths } from "../../../src/config/paths.js";
import { silentLogger } from "../../../src/io/log.js";
import { oauthEntryOf } from "../../../src/io/oauth/settings.js";
import { followAuthorization } from "../../fakes/authServer/browserDriver.js";
import {
  type FakeAs,
  type FakeResource,
  startFakeAs,
  startFakeResource,
} from "../../fakes/authServer/fakeAs.js";
import { type Certs, makeCerts } from "../../fixtures/mcp/certs.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { loginWith } from "./helpers.js";

/**
 * Spec 5.2 + 5.3: an `auth: oauth` server behind a private CA (`ssl_verify: <bundle>`) or a
 * self-signed certificate (`ssl_verify: false`) can log in — OAuth discovery at the MCP server uses
 * the same TLS settings as the MCP transport.
 */
let home: TempHome;
let certs: Certs;
let auth: FakeAs;
let rs: FakeResource;

beforeAll(async () => {
  home = tempHome();
  certs = await makeCerts(home.dir);
  auth = await startFakeAs();
  rs = await startFakeResource([auth.url], {
    tls: { key: certs.read(certs.serverKey), cert: certs.read(certs.serverCert) },
  });
}, 60_000);
afterAll(async () => {
  await rs?.close();
  await auth?.close();
  home.cleanup();
});

/** A browser login to the MCP server `rs` (or `raw.url`); `follow` is what the browser does with a URL it opens. */
function job(
  name: string,
  raw: Record<string, unknown>,
  follow: (u: string) => Promise<unknown> = followAuthorization,
) {
  const entry = oauthEntryOf(name, { url: rs.url, auth: "oauth", oauth: { cimd: false }, ...raw });
  const opened: string[] = [];
  const j = makeJob(name, entry, {
    paths: svcPaths(home.dir),
    logger: silentLogger(),
    print: () => {},
    openBrowser: async (u) => {
      opened.push(u);
      await follow(u);
    },
  });
  return { job: j, printed: [], opened };
}

/**
 * A browser login to the https MCP server at `url` (its CA trusted) that must fail before the browser
 * opens: its error's message and the URLs opened.
 */
async function refusedLogin(
  name: string,
  url: string,
  follow: (u: string) => Promise<unknown> = async () => {},
): Promise<{ message: string; opened: string[] }> {
  const h = job(name, { url, ssl_verify: certs.caCert }, follow);
  const err = (await loginWith(h).catch((e: unknown) => e)) as Error;
  expect(err).toBeInstanceOf(Error);
  return { message: err.message, opened: h.opened };
}

describe("OAuth login to an HTTPS MCP server with its own TLS settings", () => {
  it("ssl_verify: <CA bundle> is used for discovery at the server; the login completes", async () => {
    const h = job("private-ca", { ssl_verify: certs.caCert });
    const tokens = await loginWith(h);
    expect(tokens.access_token).toBe(auth.issued.at(-1));
    expect(new URL(h.opened[0] as string).searchParams.get("resource")).toBe(rs.url);
    expect(rs.seen.some((r) => r.path.startsWith("/.well-known/oauth-protected-resource"))).toBe(true);
  });

  it("ssl_verify: false skips verification for the OAuth requests too", async () => {
    const tokens = await loginWith(job("insecure", { ssl_verify: false }));
    expect(tokens.access_token).toBe(auth.issued.at(-1));
  });

  it("without ssl_verify the private CA is refused, naming the TLS failure", async () => {
    const err = (await loginWith(job("default", {})).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(
      /^default: OAuth discovery failed — GET https:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp → unreachable \(fetch failed: unable to verify the first certificate\); GET/,
    );
    // Each failed request is listed once.
    expect(err.message.match(/oauth-protected-resource\/mcp →/g)).toHaveLength(1);
  });

  it("without ssl_verify a CA of the system trust store (SSL_CERT_FILE) is trusted, as by the MCP transport", async () => {
    const saved = process.env.SSL_CERT_FILE;
    process.env.SSL_CERT_FILE = certs.caCert;
    try {
      const tokens = await loginWith(job("system-ca", {}));
      expect(tokens.access_token).toBe(auth.issued.at(-1));
    } finally {
      if (saved === undefined) delete process.env.SSL_CERT_FILE;
      else process.env.SSL_CERT_FILE = saved;
    }
  });

  it("an https authorization server whose token endpoint is plain http is refused before the browser opens", async () => {
    const tls = { key: certs.read(certs.serverKey), cert: certs.read(certs.serverCert) };
    const plain = await startFakeAs();
    const secure = await startFakeAs({ tls, metadata: () => ({ token_endpoint: `${plain.url}/token` }) });
    const resource = await startFakeResource([secure.url], { tls });
    const trusting = new Agent({ connect: { ca: certs.read(certs.caCert) } });
    try {
      // The browser trusts the private CA: it follows the https authorization redirect to the callback.
      const { message, opened } = await refusedLogin("downgrade", resource.url, async (u) => {
        const res = await undiciFetch(u, { redirect: "manual", dispatcher: trusting });
        await fetch(res.headers.get("location") as string);
      });
      expect(message).toContain(
        `downgrade: no usable authorization server — ${secure.url}: its token_endpoint ${plain.url}/token is not https`,
      );
      expect(opened).toEqual([]);
      // No code, verifier or registration ever travels in clear text.
      expect(plain.seen).toEqual([]);
    } finally {
      await trusting.close();
      await resource.close();
      await secure.close();
      await plain.close();
    }
  });

  it("an https MCP server's authorization server on plain http beyond loopback is refused before any request to it", async () => {
    // TEST-NET-1: never reached; a request to it would hang, not answer.
    const offMachine = "http://192.0.2.1:9";
    const tls = { key: certs.read(certs.serverKey), cert: certs.read(certs.serverCert) };
    const resource = await startFakeResource([offMachine], { tls });
    try {
      const { message, opened } = await refusedLogin("offmachine", resource.url);
      expect(opened).toEqual([]);
      expect(message).toBe(
        `offmachine: no usable authorization server — ${offMachine}: it is plain http although the MCP server ${resource.url} is https (codes and tokens would travel in clear text) — the server's operator must serve it over https. Fix: ask the server's operator to serve its authorization server over https, or check mcp_servers.offmachine.url.`,
      );
    } finally {
      await resource.close();
    }
  });

  it("a loopback http authorization server of an https MCP server whose token endpoint is off the machine in clear text is refused", async () => {
    const plain = await startFakeAs({ metadata: () => ({ token_endpoint: "http://192.0.2.1:9/token" }) });
    const resource = await startFakeResource([plain.url], {
      tls: { key: certs.read(certs.serverKey), cert: certs.read(certs.serverCert) },
    });
    try {
      const { message, opened } = await refusedLogin("leaky", resource.url);
      expect(opened).toEqual([]);
      expect(message).toContain(
        `leaky: no usable authorization server — ${plain.url}: its token_endpoint http://192.0.2.1:9/token is plain http although the MCP server ${resource.url} is https`,
      );
      // Its metadata was read (on this machine); no registration or code went anywhere.
      expect(plain.seen.every((r) => r.path.startsWith("/.well-known/"))).toBe(true);
    } finally {
      await resource.close();
      await plain.close();
    }
  });

  it("a missing CA bundle fails with a server-scoped message", async () => {
    expect(() => job("nofile", { ssl_verify: `${home.dir}/missing-ca.pem` })).toThrow(
      /mcp_servers\.nofile: ssl_verify CA bundle file not found: .*missing-ca\.pem/,
    );
  });
});
