import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { webExtractTool } from "../../../src/agent/tools/webExtract.js";
import { toolsSchema, type WebSettings } from "../../../src/config/sections/tools.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { makeCerts } from "../../fixtures/mcp/certs.js";
import { type ForwardProxy, startForwardProxy } from "../../helpers/forwardProxy.js";
import { outcomeText, toolContext } from "../../helpers/toolContext.js";

/**
 * web_extract through HTTPS_PROXY / HTTP_PROXY (docs/operations.md, "Outbound proxy"): the address rules
 * judge the host's resolved addresses before the request goes to the proxy; the proxy connects.
 */

const defaults = toolsSchema.parse({}).web;
const settings = (over: Partial<WebSettings> = {}): WebSettings => ({ ...defaults, ...over });
const PAGE = "<html><head><title>Notes</title></head><body><p>Through the proxy.</p></body></html>";
const NAMES = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];
const saved = Object.fromEntries([...NAMES, "NO_PROXY", "no_proxy"].map((n) => [n, process.env[n]]));

let dir: string;
let tls: Server;
let site: FakeApi;
let proxy: ForwardProxy | undefined;
let certs: Awaited<ReturnType<typeof makeCerts>>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-extract-proxy-"));
  certs = await makeCerts(dir);
  site = await startFakeApi(() => ({ text: PAGE, headers: { "content-type": "text/html" } }));
  // Its certificate is issued by the test CA, which this process does not trust.
  tls = createServer(
    { key: readFileSync(certs.serverKey), cert: readFileSync(certs.serverCert) },
    (_req, res) => res.end(PAGE),
  );
  await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
});

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  site.requests.length = 0;
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

afterAll(async () => {
  await site.close();
  await new Promise<void>((resolve) => tls.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

async function through(auth?: string) {
  proxy = await startForwardProxy(
    {
      "page.test:80": `127.0.0.1:${new URL(site.url).port}`,
      "model.test:443": `127.0.0.1:${(tls.address() as AddressInfo).port}`,
    },
    auth,
  );
  for (const name of NAMES) delete process.env[name];
  process.env.HTTP_PROXY = proxy.url;
  process.env.HTTPS_PROXY = proxy.url;
  return proxy;
}

const resolved = (address: string) => async () => [{ address, family: 4 }];

describe("web_extract through a proxy", () => {
  it("a host that resolves to public addresses is fetched through the proxy (http: forwarded)", async () => {
    const p = await through("svc:pa@ss");
    const tool = webExtractTool(settings(), { resolve: resolved("93.184.216.34") });
    const outcome = await tool.execute({ url: "http://page.test/notes" }, toolContext());
    expect(outcomeText(outcome)).toBe("URL: http://page.test/notes\nTitle: Notes\n\nThrough the proxy.");
    expect(p.forwarded).toEqual(["http://page.test/notes"]);
    expect(p.authorizations).toEqual([`Basic ${Buffer.from("svc:pa@ss").toString("base64")}`]);
    expect(site.requests[0]?.headers.host).toBe("page.test");
  });

  it("a host that resolves to a private address is refused before anything is sent to the proxy", async () => {
    const p = await through();
    const tool = webExtractTool(settings(), { resolve: resolved("10.0.0.7") });
    const outcome = await tool.execute({ url: "http://page.test/notes" }, toolContext());
    expect(outcome).toEqual({
      ok: false,
      error:
        "refused: page.test (10.0.0.7) is a private, loopback or link-local address (set tools.web.allow_private: true to allow it)",
    });
    expect(p.forwarded).toEqual([]);
    expect(site.requests).toHaveLength(0);
  });

  it("with allow_private: true the name is left to the proxy (not resolved here)", async () => {
    const p = await through();
    const tool = webExtractTool(settings({ allow_private: true }), {
      resolve: async () => {
        throw Object.assign(new Error("no DNS here"), { code: "ENOTFOUND" });
      },
    });
    const outcome = await tool.execute({ url: "http://page.test/notes" }, toolContext());
    expect(outcome.ok).toBe(true);
    expect(p.forwarded).toEqual(["http://page.test/notes"]);
  });

  it("https goes through a CONNECT tunnel and the origin's certificate is still verified inside it", async () => {
    const p = await through();
    const tool = webExtractTool(settings(), { resolve: resolved("93.184.216.34") });
    const outcome = await tool.execute({ url: "https://model.test/notes" }, toolContext());
    expect(outcome).toEqual({
      ok: false,
      error: "fetch of model.test failed: UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    });
    expect(p.tunnels).toEqual(["model.test:443"]);
  });

  it("an https:// proxy is verified against the system's CAs (SSL_CERT_FILE) and its own name", async () => {
    proxy = await startForwardProxy({ "page.test:80": `127.0.0.1:${new URL(site.url).port}` }, undefined, {
      key: certs.read(certs.serverKey),
      cert: certs.read(certs.serverCert),
    });
    for (const name of NAMES) delete process.env[name];
    process.env.HTTP_PROXY = proxy.url;
    const saved = process.env.SSL_CERT_FILE;
    process.env.SSL_CERT_FILE = certs.caCert;
    try {
      const tool = webExtractTool(settings(), { resolve: resolved("93.184.216.34") });
      const outcome = await tool.execute({ url: "http://page.test/notes" }, toolContext());
      expect(outcomeText(outcome)).toBe("URL: http://page.test/notes\nTitle: Notes\n\nThrough the proxy.");
      // Through an https:// proxy an http URL is tunnelled, as undici does: nothing in the clear.
      expect(proxy.tunnels).toEqual(["page.test:80"]);
      expect(proxy.forwarded).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.SSL_CERT_FILE;
      else process.env.SSL_CERT_FILE = saved;
    }
  });

  it("a proxy refusing the credentials (407) or the destination (403) is named with its variable", async () => {
    const p = await through("svc:right");
    process.env.HTTP_PROXY = p.url.replace("right", "wrong");
    process.env.HTTPS_PROXY = p.url.replace("right", "wrong");
    const shown = `http://127.0.0.1:${new URL(p.url).port}`;
    const tool = webExtractTool(settings(), { resolve: resolved("93.184.216.34") });
    for (const url of ["http://page.test/notes", "https://model.test/notes"]) {
      const outcome = await tool.execute({ url }, toolContext());
      const variable = url.startsWith("https") ? "HTTPS_PROXY" : "HTTP_PROXY";
      expect(outcome).toEqual({
        ok: false,
        error: `fetch of ${new URL(url).host} failed: the proxy ${shown} (set by ${variable}) refused the request: HTTP 407 Proxy Authentication Required — check the user and password in ${variable}`,
      });
    }
    process.env.HTTPS_PROXY = p.url;
    const elsewhere = await tool.execute({ url: "https://other.test/" }, toolContext());
    expect(elsewhere).toEqual({
      ok: false,
      error: `fetch of other.test failed: the proxy ${shown} (set by HTTPS_PROXY) refused to connect to other.test: HTTP 403 Forbidden — the proxy may not allow this host; add the host to NO_PROXY if it is reachable without the proxy`,
    });
  });
});
