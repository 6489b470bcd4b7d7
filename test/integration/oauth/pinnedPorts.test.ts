/**
 * The only test file that binds the pinned callback ports 27890–27894 (spec 5.6): other suites use
 * random ports. Ports another process already holds are tolerated where the test asserts fallback.
 */
import { createServer, type Server } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createActor, SimulatedClock, waitFor } from "xstate";
import { browserLoginLogic } from "../../../src/actors/oauth/browserLogin.js";
import { PINNED_PORTS, pinnedRedirectUris } from "../../../src/io/oauth/callbackServer.js";
import { validateClientMetadataDocument } from "../../../src/io/oauth/cimd.js";
import { BROWSER_LOGIN_TIMEOUT_MS } from "../../../src/io/oauth/settings.js";
import { followAuthorization } from "../../fakes/authServer/browserDriver.js";
import { type DocumentHost, startDocumentHost } from "../../fakes/authServer/documentHost.js";
import { startFakeAs, startFakeResource } from "../../fakes/authServer/fakeAs.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { closedPort } from "../../helpers/closedPort.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { acquirePinnedPorts } from "../../helpers/pinnedPortsLock.js";
import { harness, loginWith } from "./helpers.js";

let docs: DocumentHost;
let home: TempHome;
const closers: Array<() => Promise<void>> = [];

function serveDocument(overrides: Record<string, unknown> = {}, status = 200, type = "application/json") {
  docs.answer = (url, res) => {
    if (status >= 300 && status < 400) {
      res.writeHead(status, { location: `${docs.base}/elsewhere.json` }).end();
      return;
    }
    res.writeHead(status, { "content-type": type }).end(
      JSON.stringify({
        client_id: url,
        client_name: "svc",
        redirect_uris: pinnedRedirectUris(),
        ...overrides,
      }),
    );
  };
}

let releasePorts: () => void = () => {};
beforeAll(async () => {
  releasePorts = await acquirePinnedPorts();
  docs = await startDocumentHost();
});
afterAll(async () => {
  await docs.close();
  releasePorts();
});
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
  home?.cleanup();
});

async function occupy(port: number): Promise<Server | undefined> {
  const s = createServer();
  const ok = await new Promise<boolean>((resolve) => {
    s.once("error", () => resolve(false));
    s.listen({ port, host: "127.0.0.1", exclusive: true }, () => resolve(true));
  });
  if (!ok) return undefined;
  closers.push(() => new Promise((r) => s.close(() => r())));
  return s;
}

async function setup(asOptions: Parameters<typeof startFakeAs>[0] = {}) {
  home = tempHome();
  const as = await startFakeAs(asOptions);
  closers.push(as.close);
  const rs = await startFakeResource([as.url]);
  closers.push(rs.close);
  return { as, rs };
}

function redirectPort(authorizationUrl: string): number {
  return Number(new URL(new URL(authorizationUrl).searchParams.get("redirect_uri") as string).port);
}

describe("client metadata document and pinned callback ports", () => {
  it("uses the document as client_id on a pinned port when the server advertises support", async () => {
    serveDocument();
    const { as, rs } = await setup({ cimd: true });
    const url = `${docs.base}/oauth/client.json`;
    const anyFree = await somePinnedPortFree();
    const h = harness(home.dir, "doc", rs.url, { client_metadata_url: url }, { fetch: docs.fetch });
    await loginWith(h);
    const authorize = new URL(h.opened[0] as string);
    expect(authorize.searchParams.get("client_id")).toBe(url);
    const port = redirectPort(h.opened[0] as string);
    // A pinned port unless another process holds all five.
    if (anyFree) {
      expect(PINNED_PORTS).toContain(port);
      expect(authorize.searchParams.get("redirect_uri")).toBe(`http://127.0.0.1:${port}/callback`);
    }
    expect(as.seen.some((r) => r.path === "/register")).toBe(false);
    expect(h.job.store.readClient()).toMatchObject({ client_id: url, kind: "cimd" });
  });

  it("without advertised support it registers dynamically even with a document configured", async () => {
    serveDocument();
    const { as, rs } = await setup({ cimd: false });
    const h = harness(
      home.dir,
      "nodoc",
      rs.url,
      { client_metadata_url: `${docs.base}/oauth/client.json` },
      { fetch: docs.fetch },
    );
    await loginWith(h);
    expect(as.seen.some((r) => r.path === "/register")).toBe(true);
    // The metadata is now cached without document support, and a registration stored: the next login
    // reuses that registration on the port it registered, with no document.
    const again = harness(
      home.dir,
      "nodoc",
      rs.url,
      { client_metadata_url: `${docs.base}/oauth/client.json` },
      { fetch: docs.fetch },
    );
    await loginWith(again);
    expect(redirectPort(again.opened[0] as string)).toBe(redirectPort(h.opened[0] as string));
    expect(as.seen.filter((r) => r.path === "/register")).toHaveLength(1);
    expect(new URL(again.opened[0] as string).searchParams.get("client_id")).toMatch(/^dcr-/);
  });

  it("skips a busy pinned port and falls back to a random port when all five are busy", async () => {
    serveDocument();
    const { rs } = await setup({ cimd: true });
    const first = PINNED_PORTS.find((p) => p >= 0);
    const held = await occupy(first as number);
    const h = harness(
      home.dir,
      "busy",
      rs.url,
      { client_metadata_url: `${docs.base}/c.json` },
      { fetch: docs.fetch },
    );
    await loginWith(h);
    const port = redirectPort(h.opened[0] as string);
    if (held) expect(port).not.toBe(first);
    for (const p of PINNED_PORTS) await occupy(p);
    const h2 = harness(
      home.dir,
      "busy2",
      rs.url,
      { client_metadata_url: `${docs.base}/c.json` },
      { fetch: docs.fetch },
    );
    await loginWith(h2);
    expect(PINNED_PORTS).not.toContain(redirectPort(h2.opened[0] as string));
    // The document declares only the pinned callbacks: on a random port the client registers instead.
    expect(new URL(h2.opened[0] as string).searchParams.get("client_id")).toMatch(/^dcr-/);
    expect(h2.job.store.readClient()?.kind).toBe("dcr");
  });

  it("a login on a random port (a custom client_name) registers instead of presenting the document", async () => {
    serveDocument();
    const { as, rs } = await setup({ cimd: true });
    const url = `${docs.base}/c.json`;
    const h = harness(
      home.dir,
      "named",
      rs.url,
      { client_metadata_url: url, client_name: "Mine" },
      { fetch: docs.fetch },
    );
    await loginWith(h);
    const authorize = new URL(h.opened[0] as string);
    expect(PINNED_PORTS).not.toContain(redirectPort(authorize.href));
    expect(authorize.searchParams.get("client_id")).not.toBe(url);
    expect(as.seen.filter((r) => r.path === "/register")).toHaveLength(1);
  });

  it("a login after a document login presents the document again on a pinned port; after cimd: false, it registers", async () => {
    serveDocument();
    const { as, rs } = await setup({ cimd: true });
    const url = `${docs.base}/c.json`;
    const login = async (extra: Record<string, unknown> = {}) => {
      const h = harness(
        home.dir,
        "again",
        rs.url,
        { client_metadata_url: url, ...extra },
        { fetch: docs.fetch },
      );
      await loginWith(h);
      return new URL(h.opened[0] as string);
    };
    await login();
    expect((await login()).searchParams.get("client_id")).toBe(url);
    const anyFree = await somePinnedPortFree();
    const again = await login();
    if (anyFree) expect(PINNED_PORTS).toContain(redirectPort(again.href));
    expect(as.seen.some((r) => r.path === "/register")).toBe(false);
    const off = await login({ cimd: false });
    expect(off.searchParams.get("client_id")).toMatch(/^dcr-/);
    expect(as.seen.filter((r) => r.path === "/register")).toHaveLength(1);
  });

  it("concurrent logins hold different ports until their redirects arrive", async () => {
    serveDocument();
    const { rs } = await setup({ cimd: true });
    const gates: Array<() => void> = [];
    const make = (name: string) => {
      const h = harness(
        home.dir,
        name,
        rs.url,
        { client_metadata_url: `${docs.base}/c.json` },
        { fetch: docs.fetch },
      );
      return {
        ...h,
        job: {
          ...h.job,
          openBrowser: async (u: string) => {
            h.opened.push(u);
            await new Promise<void>((r) => gates.push(r));
            await followAuthorization(u);
          },
        },
      };
    };
    const a = make("a");
    const b = make("b");
    const both = Promise.all([loginWith(a), loginWith(b)]);
    await vi_waitFor(() => gates.length === 2);
    expect(redirectPort(a.opened[0] as string)).not.toBe(redirectPort(b.opened[0] as string));
    for (const g of gates) g();
    await both;
  });

  it("records invalid_client for the document in <server>.cimd-off and completes the login with registration", async () => {
    serveDocument();
    const { as, rs } = await setup({ cimd: true, rejectDocument: true });
    const log = captureLogger();
    const h = harness(
      home.dir,
      "rejected",
      rs.url,
      { client_metadata_url: `${docs.base}/c.json` },
      { fetch: docs.fetch, logger: log.logger },
    );
    const tokens = await loginWith(h);
    expect(tokens.access_token).toBe(as.issued[0]);
    expect(h.job.store.cimdOff()).toBe(true);
    // Spec 5.7: the rejection is logged.
    expect(log.messages()).toContain(
      "[oauth] the authorization server rejected the client metadata document (invalid_client); using dynamic registration from now on",
    );
    expect(h.job.store.readClient()?.kind).toBe("dcr");
    expect(as.seen.filter((r) => r.path === "/register")).toHaveLength(1);
    expect(h.opened).toHaveLength(2);
    expect(PINNED_PORTS).not.toContain(redirectPort(h.opened[1] as string));
  });

  it("a rejected document whose registration retry then fails leaves the earlier registration and tokens as they were", async () => {
    serveDocument();
    const { rs } = await setup({ cimd: true, rejectDocument: true });
    const first = harness(home.dir, "kept", rs.url);
    const tokens = await loginWith(first);
    const client = first.job.store.readClient();
    expect(client?.kind).toBe("dcr");
    if (!(await somePinnedPortFree())) return;
    // `svc mcp login` with a document configured since: the server refuses the document, and the user
    // refuses the login that retries with registration.
    const h = harness(
      home.dir,
      "kept",
      rs.url,
      { client_metadata_url: `${docs.base}/c.json` },
      {
        fetch: docs.fetch,
        freshClient: true,
        openBrowser: async (u: string) => {
          h.opened.push(u);
          if (h.opened.length === 1) {
            await followAuthorization(u);
            return;
          }
          const authorize = new URL(u);
          const back = new URL(authorize.searchParams.get("redirect_uri") as string);
          back.searchParams.set("error", "access_denied");
          back.searchParams.set("state", authorize.searchParams.get("state") as string);
          await fetch(back);
        },
      },
    );
    const err = (await loginWith(h).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/access_denied/);
    expect(h.opened).toHaveLength(2);
    expect(h.job.store.cimdOff()).toBe(true);
    expect(h.job.store.readTokens()).toEqual(tokens);
    expect(h.job.store.readClient()).toEqual(client);
  });

  it("times out after five minutes when the server cannot fetch the document, pointing to cimd: false, and frees the port", async () => {
    serveDocument();
    const { rs } = await setup({ cimd: true, cannotFetchDocument: true });
    const h = harness(
      home.dir,
      "unfetchable",
      rs.url,
      { client_metadata_url: `${docs.base}/c.json` },
      { fetch: docs.fetch },
    );
    const clock = new SimulatedClock();
    const actor = createActor(browserLoginLogic, {
      input: { serverName: "unfetchable", job: h.job, timeoutMs: BROWSER_LOGIN_TIMEOUT_MS },
      clock,
    }).start();
    await waitFor(actor, (s) => s.matches("awaitingRedirect"));
    await vi_waitFor(() => h.opened.length === 1);
    const port = redirectPort(h.opened[0] as string);
    clock.increment(BROWSER_LOGIN_TIMEOUT_MS);
    const out = actor.getSnapshot().output;
    expect(out?.ok).toBe(false);
    expect(out && !out.ok && out.error.message).toMatch(/timed out after 5 minutes.*`cimd: false`/);
    expect(h.job.store.readTokens()).toBeUndefined();
    await vi_waitFor(async () => (await occupy(port)) !== undefined);
  });

  it("a login whose document breaks a rule fails naming the server entry's key, the rule and the fix", async () => {
    serveDocument({}, 200, "text/html");
    const { as, rs } = await setup({ cimd: true });
    const url = `${docs.base}/oauth/client.json`;
    const h = harness(home.dir, "baddoc", rs.url, { client_metadata_url: url }, { fetch: docs.fetch });
    const err = (await loginWith(h).catch((e: unknown) => e)) as Error;
    expect(err.message).toBe(
      `baddoc: mcp_servers.baddoc.oauth.client_metadata_url ${url}: Content-Type is "text/html", expected application/json — fix the document or set cimd: false`,
    );
    expect(h.opened).toEqual([]);
    expect(as.seen.some((r) => r.path === "/register")).toBe(false);
  });

  it("a document URL that breaks a URL rule once rendered (${VAR}) is named with a fix for the URL, not the document", async () => {
    const { as, rs } = await setup({ cimd: true });
    const url = "http://app.example.com/oauth/client.json";
    const h = harness(home.dir, "badurl", rs.url, { client_metadata_url: url });
    const err = (await loginWith(h).catch((e: unknown) => e)) as Error;
    expect(err.message).toBe(
      `badurl: mcp_servers.badurl.oauth.client_metadata_url ${url}: must use https (a client metadata document URL is an https URL with a path, and no fragment, userinfo or dot segments) — correct the URL (or the variable it is built from), or set cimd: false`,
    );
    expect(h.opened).toEqual([]);
    expect(as.seen.some((r) => r.path === "/register")).toBe(false);
  });

  it("a document svc cannot reach (connection refused) is presented anyway, with a warning naming the URL", async () => {
    const { as, rs } = await setup({ cimd: true });
    const port = await closedPort();
    const url = `https://127.0.0.1:${port}/oauth/client.json`;
    const h = harness(home.dir, "walled", rs.url, { client_metadata_url: url });
    await loginWith(h);
    expect(new URL(h.opened[0] as string).searchParams.get("client_id")).toBe(url);
    expect(as.seen.some((r) => r.path === "/register")).toBe(false);
    expect(h.printed.join("\n")).toMatch(
      new RegExp(
        `warning: walled: mcp_servers\\.walled\\.oauth\\.client_metadata_url ${url.replace(/[.]/g, "\\.")}: not reachable from here \\(.*ECONNREFUSED.*\\); presenting it anyway`,
      ),
    );
  });

  it("a document on a port fetch refuses (6000, 6666, 10080) fails naming the port and another to host it on", async () => {
    const { as, rs } = await setup({ cimd: true });
    for (const port of [6000, 6666, 10080]) {
      const url = `https://127.0.0.1:${port}/oauth/client.json`;
      const h = harness(home.dir, "x11", rs.url, { client_metadata_url: url });
      const err = (await loginWith(h).catch((e: unknown) => e)) as Error;
      expect(err.message).toBe(
        `x11: mcp_servers.x11.oauth.client_metadata_url ${url}: not fetched — its port ${port} is one HTTP clients refuse (the Fetch standard's blocked ports, such as 6000, 6665-6669 and 10080), so svc cannot read the document, nor can an authorization server that fetches as browsers do: host it on another port, such as 443, or set cimd: false`,
      );
      expect(h.opened).toEqual([]);
    }
    expect(as.seen.some((r) => r.path === "/register")).toBe(false);
  });

  it("a document svc reaches but that is wrong still fails before the browser opens", async () => {
    serveDocument({ client_id: "https://other.test/client.json" });
    const { as, rs } = await setup({ cimd: true });
    const url = `${docs.base}/oauth/client.json`;
    const h = harness(home.dir, "wrongdoc", rs.url, { client_metadata_url: url }, { fetch: docs.fetch });
    const err = (await loginWith(h).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/client_id must be the document's own URL/);
    expect(h.opened).toEqual([]);
    expect(as.seen.some((r) => r.path === "/register")).toBe(false);
  });

  it("validates the document exactly as spec 5.8 says", async () => {
    const url = `${docs.base}/oauth/client.json`;
    serveDocument();
    await expect(validateClientMetadataDocument(url, docs.fetch)).resolves.toMatchObject({ client_id: url });
    serveDocument({ redirect_uris: pinnedRedirectUris().slice(1) });
    await expect(validateClientMetadataDocument(url, docs.fetch)).rejects.toThrow(
      /missing http:\/\/127\.0\.0\.1:27890\/callback/,
    );
    serveDocument({ client_id: "https://other.test/client.json" });
    await expect(validateClientMetadataDocument(url, docs.fetch)).rejects.toThrow(
      /client_id must be the document's own URL/,
    );
    serveDocument({}, 302);
    await expect(validateClientMetadataDocument(url, docs.fetch)).rejects.toThrow(/redirects/);
    serveDocument({}, 200, "text/plain");
    await expect(validateClientMetadataDocument(url, docs.fetch)).rejects.toThrow(
      /Content-Type is "text\/plain"/,
    );
    serveDocument({}, 404);
    await expect(validateClientMetadataDocument(url, docs.fetch)).rejects.toThrow(/answered 404/);
    await expect(validateClientMetadataDocument(`${docs.base}/a/../c.json`, docs.fetch)).rejects.toThrow(
      /dot segments|\. or \.\./,
    );
  });
});

async function somePinnedPortFree(): Promise<boolean> {
  for (const p of PINNED_PORTS) {
    const s = createServer();
    const ok = await new Promise<boolean>((resolve) => {
      s.once("error", () => resolve(false));
      s.listen({ port: p, host: "127.0.0.1", exclusive: true }, () => resolve(true));
    });
    if (ok) {
      await new Promise<void>((r) => s.close(() => r()));
      return true;
    }
  }
  return false;
}

async function vi_waitFor(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 10));
  }
}
