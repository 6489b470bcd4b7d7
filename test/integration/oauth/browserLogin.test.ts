import { statSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { makeJob } from "../../../src/actors/oauth/context.js";
import { usableTokens } from "../../../src/actors/oauth/refresh.js";
import { svcPaths } from "../../../src/config/paths.js";
import { silentLogger } from "../../../src/io/log.js";
import { PINNED_PORTS } from "../../../src/io/oauth/callbackServer.js";
import { USER_AGENT } from "../../../src/io/version.js";
import { startFakeApi } from "../../fakes/httpFake.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { harness, loginWith, oauthFakesPerTest } from "./helpers.js";

let home: TempHome;
const { as, resource, closeLater } = oauthFakesPerTest();
afterEach(() => home?.cleanup());

describe("browser login (PKCE + dynamic registration) against a loopback authorization server", () => {
  it("discovers, registers, authorizes with S256 and resource, and stores tokens 0600 with an absolute expiry", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "srv", rs.url, { cimd: false, user_agent: "Custom-Agent/9" });
    const before = Date.now();
    const tokens = await loginWith(h);
    expect(tokens.access_token).toBe(auth.issued[0]);
    expect(tokens.expires_at).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(statSync(h.job.store.tokensPath).mode & 0o777).toBe(0o600);
    expect(h.job.store.readClient()?.client_id).toMatch(/^dcr-/);
    expect(h.printed.join("\n")).toContain(h.opened[0]);

    const authorize = new URL(h.opened[0] as string);
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("resource")).toBe(rs.url);
    expect(authorize.searchParams.get("scope")).toBe("mcp");
    const port = Number(new URL(authorize.searchParams.get("redirect_uri") as string).port);
    expect(PINNED_PORTS).not.toContain(port);

    const token = auth.seen.find((r) => r.path === "/token");
    expect(token?.body.get("resource")).toBe(rs.url);
    // 5.9: Svc-Agent on discovery and registration, the configured value on the token endpoint only.
    expect(token?.headers["user-agent"]).toBe("Custom-Agent/9");
    const byClient = auth.seen.filter((x) => x.path !== "/token" && x.path !== "/authorize");
    expect(byClient.length).toBeGreaterThan(0);
    for (const r of [...rs.seen, ...byClient]) expect(r.headers["user-agent"]).toBe(USER_AGENT);
  });

  it("scans several authorization servers in order and uses the first with a matching issuer and S256", async () => {
    home = tempHome();
    const wrongIssuer = await as({ issuer: () => "https://elsewhere.test" });
    const noS256 = await as({ s256: false });
    const good = await as();
    const rs = await resource([wrongIssuer.url, noS256.url, good.url]);
    const h = harness(home.dir, "multi", rs.url, { cimd: false });
    await loginWith(h);
    expect(h.job.store.readTokens()?.issuer).toBe(good.url);
    expect(wrongIssuer.seen.some((r) => r.path === "/register")).toBe(false);
    expect(noS256.seen.some((r) => r.path === "/register")).toBe(false);
  });

  it("refuses a server without S256 with an error naming the reason", async () => {
    home = tempHome();
    const plain = await as({ s256: false });
    const rs = await resource([plain.url]);
    const h = harness(home.dir, "plain", rs.url, { cimd: false });
    await expect(loginWith(h)).rejects.toThrow(/does not advertise PKCE S256/);
    expect(h.opened).toHaveLength(0);
  });

  it("when every discovery fetch fails, the error leads with their statuses", async () => {
    home = tempHome();
    const rs = await resource([], { status: 404 });
    const h = harness(home.dir, "down", rs.url, { cimd: false });
    const err = (await loginWith(h).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(
      /^down: OAuth discovery failed — GET http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\S* → 404/,
    );
    expect(err.message).toMatch(/oauth-authorization-server → 401/);

    const broken = await as({ metadataStatus: 500 });
    const rs2 = await resource([broken.url]);
    const err2 = (await loginWith(harness(home.dir, "down2", rs2.url, { cimd: false })).catch(
      (e: unknown) => e,
    )) as Error;
    expect(err2.message).toMatch(
      /^down2: OAuth discovery failed — GET \S+\/\.well-known\/oauth-authorization-server → 500/,
    );
    expect(broken.seen.some((r) => r.path === "/register")).toBe(false);
  });

  it("a server with no metadata anywhere: registration is tried at the default /register of its origin, and the error leads with the discovery statuses, then that registration's 404", async () => {
    home = tempHome();
    const api = await startFakeApi((r) =>
      r.url.startsWith("/mcp")
        ? { status: 401, headers: { "www-authenticate": "Bearer" }, text: "" }
        : { status: 404, text: "Not Found" },
    );
    closeLater(api.close);
    const h = harness(home.dir, "bare", `${api.url}/mcp`, { cimd: false });
    const err = (await loginWith(h).catch((e: unknown) => e)) as Error;
    expect(api.requests.some((r) => r.method === "POST" && r.url === "/register")).toBe(true);
    const statuses = err.message.indexOf(`GET ${api.url}/.well-known/oauth-authorization-server → 404`);
    const registration = err.message.indexOf(`${api.url}/register answered 404: Not Found`);
    expect(err.message).toMatch(/^bare: OAuth discovery failed — GET /);
    expect(statuses).toBeGreaterThan(0);
    expect(registration).toBeGreaterThan(statuses);
    expect(h.opened).toHaveLength(0);
  });

  it("a failed discovery names each URL without the server url's query (an API key) or userinfo password", async () => {
    home = tempHome();
    const api = await startFakeApi(() => ({ status: 404, text: "no" }));
    closeLater(api.close);
    const withKey = harness(home.dir, "keyed", `${api.url}/mcp?api_key=k3y-in-the-query`, { cimd: false });
    const err = (await loginWith(withKey).catch((e: unknown) => e)) as Error;
    expect(api.requests.some((r) => r.url.includes("api_key=k3y-in-the-query"))).toBe(true);
    expect(err.message).toContain(
      `keyed: OAuth discovery failed — GET ${api.url}/.well-known/oauth-protected-resource/mcp?… → 404`,
    );
    expect(err.message).not.toContain("k3y-in-the-query");

    const withPassword = harness(
      home.dir,
      "basic",
      `${api.url.replace("http://", "http://u:pa55word@")}/mcp`,
      {
        cimd: false,
      },
    );
    const err2 = (await loginWith(withPassword).catch((e: unknown) => e)) as Error;
    expect(err2.message).toContain("basic: OAuth discovery failed — GET http://u:…@127.0.0.1");
    expect(err2.message).not.toContain("pa55word");
  });

  it("a failed token exchange reports the status and a redacted excerpt, and keeps the saved credentials", async () => {
    home = tempHome();
    const bad = await as({
      tokenError: {
        status: 400,
        body: JSON.stringify({
          error: "invalid_grant",
          error_description: "nope",
          refresh_token: "leaky-secret-value",
        }),
      },
    });
    const rs = await resource([bad.url]);
    const h = harness(home.dir, "bad", rs.url, { cimd: false });
    h.job.store.saveTokens({ access_token: "old", token_type: "Bearer", issuer: bad.url, flow: "browser" });
    const err = (await loginWith(h).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(
      /bad: token exchange failed — http:\/\/127\.0\.0\.1:\d+\/token answered 400: .*invalid_grant/,
    );
    expect(err.message).toMatch(/ — run `svc mcp login bad` to try again$/);
    expect(err.message).not.toContain("leaky-secret-value");
    expect(h.job.store.readTokens()?.access_token).toBe("old");
  });

  it("a failed token exchange quoting the saved login's tokens, which it does not send: they are redacted from the error", async () => {
    home = tempHome();
    const bad = await as({
      tokenError: {
        status: 400,
        body: JSON.stringify({
          error: "invalid_grant",
          error_description: "code replaced; session at-OLDACCESS_5511 / rt-OLDREFRESH_6622 revoked",
        }),
      },
    });
    const rs = await resource([bad.url]);
    const h = harness(home.dir, "held", rs.url, { cimd: false });
    h.job.store.saveTokens({
      access_token: "at-OLDACCESS_5511",
      refresh_token: "rt-OLDREFRESH_6622",
      token_type: "Bearer",
      issuer: bad.url,
      flow: "browser",
    });
    const err = (await loginWith(h).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/held: token exchange failed — \S+\/token answered 400: .*invalid_grant/);
    expect(err.message).toContain("session [redacted] / [redacted] revoked");
    expect(err.message).not.toMatch(/OLDACCESS|OLDREFRESH/);
  });

  it("a token endpoint quoting the client secret it was sent in free text: the secret is redacted from the error", async () => {
    home = tempHome();
    const SECRET = "sh0rt-s3cret";
    const bad = await as({
      tokenError: {
        status: 401,
        body: JSON.stringify({
          error: "invalid_client",
          error_description: `client svc-pre with secret ${SECRET} is not allowed`,
        }),
      },
    });
    const rs = await resource([bad.url]);
    const h = harness(home.dir, "quoted", rs.url, {
      cimd: false,
      client_id: "svc-pre",
      client_secret: SECRET,
      token_endpoint_auth_method: "client_secret_post",
    });
    const err = (await loginWith(h).catch((e: unknown) => e)) as Error;
    expect(bad.seen.find((r) => r.path === "/token")?.body.get("client_secret")).toBe(SECRET);
    expect(err.message).toMatch(/quoted: token exchange failed — \S+\/token answered 401: .*invalid_client/);
    expect(err.message).toContain("with secret [redacted] is not allowed");
    // The configured client was refused: the advice names the keys to check.
    expect(err.message).toMatch(
      / — check mcp_servers\.quoted\.oauth\.client_id, client_secret and token_endpoint_auth_method, then run `svc mcp login quoted`$/,
    );
    expect(err.message).not.toContain(SECRET);
  });

  it("an error the token endpoint answers with 200 (GitHub) is reported as a failed exchange with its excerpt", async () => {
    home = tempHome();
    const gh = await as({
      tokenError: {
        status: 200,
        body: JSON.stringify({
          error: "bad_verification_code",
          error_description: "The code passed is incorrect or expired.",
        }),
      },
    });
    const rs = await resource([gh.url]);
    const h = harness(home.dir, "gh", rs.url, { cimd: false });
    const err = (await loginWith(h).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(
      /gh: token exchange failed — http:\/\/127\.0\.0\.1:\d+\/token answered 200: .*bad_verification_code/,
    );
    expect(h.job.store.readTokens()).toBeUndefined();
  });

  it("GitHub's refusal of a configured client (incorrect_client_credentials, answered 200) names the keys to check, at a login and a refresh", async () => {
    home = tempHome();
    const refusal = {
      status: 200,
      body: JSON.stringify({
        error: "incorrect_client_credentials",
        error_description: "The client_id and/or client_secret passed are incorrect.",
      }),
    };
    const oauth = { cimd: false, client_id: "Iv1.abc", client_secret: "wrong" };
    const keys =
      / — check mcp_servers\.ghapp\.oauth\.client_id, client_secret and token_endpoint_auth_method, then run `svc mcp login ghapp`$/;
    const gh = await as({ tokenError: refusal });
    const h = harness(home.dir, "ghapp", (await resource([gh.url])).url, oauth);
    const err = (await loginWith(h).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(
      /^ghapp: token exchange failed — \S+\/token answered 200: .*incorrect_client_credentials/,
    );
    expect(err.message).toMatch(keys);

    const refreshed = await as({ refreshError: refusal });
    const url = (await resource([refreshed.url])).url;
    await loginWith(harness(home.dir, "ghapp", url, oauth));
    const job = makeJob(
      "ghapp",
      { url, auth: "oauth", oauth },
      { paths: svcPaths(home.dir), logger: silentLogger(), now: () => Date.now() + 2 * 3600_000 },
    );
    await expect(usableTokens(job)).rejects.toThrow(keys);
  });

  it("RFC 9207: a redirect without iss from a server that advertises it, or with another issuer, is refused", async () => {
    home = tempHome();
    const silent = await as({ issParameter: { advertise: true } });
    const h = harness(home.dir, "mixup", (await resource([silent.url])).url, { cimd: false });
    await expect(loginWith(h)).rejects.toThrow(
      /mixup: the redirect carried no iss .*login refused; run `svc mcp login mixup` to try again/,
    );
    expect(silent.seen.some((r) => r.path === "/token")).toBe(false);
    expect(h.job.store.readTokens()).toBeUndefined();

    const other = await as({ issParameter: { advertise: false, send: () => "https://attacker.test" } });
    const h2 = harness(home.dir, "mixup2", (await resource([other.url])).url, { cimd: false });
    await expect(loginWith(h2)).rejects.toThrow(
      /mixup2: the redirect came from issuer https:\/\/attacker\.test/,
    );

    const honest = await as({ issParameter: { advertise: true, send: (iss) => iss } });
    const h3 = harness(home.dir, "honest", (await resource([honest.url])).url, { cimd: false });
    expect((await loginWith(h3)).access_token).toBe(honest.issued[0]);
  });

  it("RFC 9207 covers a refusal redirected back too: one from another issuer, or without the iss advertised, is not taken for the server's", async () => {
    home = tempHome();
    const mixedUp = await as({
      authorizeError: "invalid_scope",
      issParameter: { advertise: true, send: () => "https://attacker.test" },
    });
    const h = harness(home.dir, "mixed", (await resource([mixedUp.url])).url, { cimd: false });
    // Credited to the server, invalid_scope would have said to change its oauth.scope.
    await expect(loginWith(h)).rejects.toThrow(
      /^mixed: the redirect came from issuer https:\/\/attacker\.test, expected .* — login refused; run `svc mcp login mixed` to try again/,
    );
    const silent = await as({ authorizeError: "access_denied", issParameter: { advertise: true } });
    const h2 = harness(home.dir, "silent", (await resource([silent.url])).url, { cimd: false });
    await expect(loginWith(h2)).rejects.toThrow(
      /^silent: the redirect carried no iss although .* advertises it/,
    );
    const honest = await as({
      authorizeError: "access_denied",
      issParameter: { advertise: true, send: (iss) => iss },
    });
    const h3 = harness(home.dir, "denied", (await resource([honest.url])).url, { cimd: false });
    await expect(loginWith(h3)).rejects.toThrow(
      /^denied: the authorization server refused the login: access_denied — run `svc mcp login denied` to try again$/,
    );
  });

  it("a refusal redirected back (access_denied) names the server and how to try again", async () => {
    home = tempHome();
    const auth = await as({ authorizeError: "access_denied" });
    const h = harness(home.dir, "nope", (await resource([auth.url])).url, { cimd: false });
    await expect(loginWith(h)).rejects.toThrow(
      /^nope: the authorization server refused the login: access_denied — run `svc mcp login nope` to try again$/,
    );
  });

  it("a redirect carrying code or state twice fails the login naming the parameter; no code is exchanged", async () => {
    home = tempHome();
    for (const repeated of ["code", "state"] as const) {
      const auth = await as({ repeatInRedirect: [repeated] });
      const h = harness(home.dir, `twice-${repeated}`, (await resource([auth.url])).url, { cimd: false });
      await expect(loginWith(h)).rejects.toThrow(
        new RegExp(
          `^twice-${repeated}: the authorization redirect carried ${repeated} more than once \\(a redirect carries each parameter once, so which value the server meant is unknown\\); login refused — run \`svc mcp login twice-${repeated}\` to try again$`,
        ),
      );
      expect(auth.issued).toEqual([]);
    }
  });

  it("uses a pre-registered client (secret via HTTP Basic) without registering, on a random port", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "pre", rs.url, {
      client_id: "my-client",
      client_secret: "my-secret",
      token_endpoint_auth_method: "client_secret_basic",
    });
    await loginWith(h);
    expect(auth.seen.some((r) => r.path === "/register")).toBe(false);
    const token = auth.seen.find((r) => r.path === "/token");
    expect(token?.headers.authorization).toBe(
      `Basic ${Buffer.from("my-client:my-secret").toString("base64")}`,
    );
    const port = Number(
      new URL(new URL(h.opened[0] as string).searchParams.get("redirect_uri") as string).port,
    );
    expect(PINNED_PORTS).not.toContain(port);
    expect(h.job.store.readClient()).toBeUndefined();
  });

  it("a server that accepts the connection but never answers fails the login naming the timeout, instead of hanging", async () => {
    home = tempHome();
    const { createServer } = await import("node:net");
    const sockets: import("node:net").Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    closeLater(
      () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy();
          silent.close(() => resolve());
        }),
    );
    const url = `http://127.0.0.1:${(silent.address() as import("node:net").AddressInfo).port}/mcp`;
    const h = harness(home.dir, "hung", url, { cimd: false }, { requestTimeoutMs: 200 });
    // The silent server never answers: only the request timeout (named in the message) ends the login;
    // without it the login would hang and the test fail at its own timeout.
    await expect(loginWith(h)).rejects.toThrow(
      /^hung: OAuth discovery failed — GET http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp → unreachable \(timed out after 0\.2 s\)/,
    );
  });

  it("a token endpoint that sends its headers and then stalls mid-body fails the login naming the endpoint and the timeout", async () => {
    home = tempHome();
    const { createServer } = await import("node:http");
    const stalling = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"access_token":');
    });
    await new Promise<void>((resolve) => stalling.listen(0, "127.0.0.1", resolve));
    closeLater(
      () =>
        new Promise<void>((resolve) => {
          stalling.closeAllConnections();
          stalling.close(() => resolve());
        }),
    );
    const tokenUrl = `http://127.0.0.1:${(stalling.address() as import("node:net").AddressInfo).port}/token`;
    const auth = await as({ metadata: () => ({ token_endpoint: tokenUrl }) });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "stalled", rs.url, { cimd: false }, { requestTimeoutMs: 300 });
    await expect(loginWith(h)).rejects.toThrow(
      `stalled: token exchange failed — ${tokenUrl} unreachable (timed out after 0.3 s) — run \`svc mcp login stalled\` to try again`,
    );
  });

  it("a server whose unauthenticated GET opens an event stream (401 only on POST) is discovered without waiting on the stream", async () => {
    home = tempHome();
    const auth = await as();
    const { createServer } = await import("node:http");
    let base = "";
    const probes: string[] = [];
    const streaming = createServer((req, res) => {
      req.resume();
      if (req.url === "/mcp") probes.push(req.method ?? "");
      if (req.url?.startsWith("/.well-known/oauth-protected-resource")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ resource: `${base}/mcp`, authorization_servers: [auth.url] }));
      } else if (req.method === "GET") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(": open\n\n");
      } else {
        res.writeHead(401, {
          "www-authenticate": `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
        });
        res.end();
      }
    });
    await new Promise<void>((resolve) => streaming.listen(0, "127.0.0.1", resolve));
    closeLater(
      () =>
        new Promise<void>((resolve) => {
          streaming.closeAllConnections();
          streaming.close(() => resolve());
        }),
    );
    base = `http://127.0.0.1:${(streaming.address() as import("node:net").AddressInfo).port}`;
    // The stream never ends: read to its end, the GET would only end at the request timeout, as a failure,
    // and the POST that gets the challenge would never be sent.
    const h = harness(home.dir, "streams", `${base}/mcp`, { cimd: false }, { requestTimeoutMs: 1000 });
    expect((await loginWith(h)).issuer).toBe(auth.url);
    expect(probes).toEqual(["GET", "POST"]);
  });

  it("honours oauth.redirect_uri exactly", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url]);
    const probe = await import("node:net").then(
      (net) =>
        new Promise<number>((resolve) => {
          const s = net.createServer().listen(0, "127.0.0.1", () => {
            const p = (s.address() as { port: number }).port;
            s.close(() => resolve(p));
          });
        }),
    );
    const redirect = `http://localhost:${probe}/oauth/done`;
    const h = harness(home.dir, "fixed", rs.url, { cimd: false, redirect_uri: redirect });
    await loginWith(h);
    expect(new URL(h.opened[0] as string).searchParams.get("redirect_uri")).toBe(redirect);
  });

  it("listens on the IPv6 loopback when oauth.redirect_uri names [::1] (RFC 8252 7.3)", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url]);
    const port = await import("node:net").then(
      (net) =>
        new Promise<number>((resolve) => {
          const s = net.createServer().listen(0, "::1", () => {
            const p = (s.address() as { port: number }).port;
            s.close(() => resolve(p));
          });
        }),
    );
    const redirect = `http://[::1]:${port}/callback`;
    const h = harness(home.dir, "v6", rs.url, { cimd: false, redirect_uri: redirect });
    expect((await loginWith(h)).access_token).toBe(auth.issued[0]);
    expect(new URL(h.opened[0] as string).searchParams.get("redirect_uri")).toBe(redirect);
  });

  it("a login with an oauth.redirect_uri that is not loopback fails naming the server entry's key", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "remote", rs.url, { redirect_uri: "http://example.com:8976/callback" });
    await expect(loginWith(h)).rejects.toThrow(
      /^remote: mcp_servers\.remote\.oauth\.redirect_uri http:\/\/example\.com:8976\/callback must be http:\/\/ on 127\.0\.0\.1/,
    );
    expect(auth.seen).toHaveLength(0);
  });

  it("without protected-resource metadata the resource indicator is the server URL without its query (an API key stays home)", async () => {
    home = tempHome();
    const auth = await as();
    const url = `${auth.url}/mcp?api_key=SECRET-KEY-123`;
    const h = harness(home.dir, "keyed", url, { cimd: false });
    const tokens = await loginWith(h);
    const authorize = new URL(h.opened[0] as string);
    expect(authorize.searchParams.get("resource")).toBe(`${auth.url}/mcp`);
    expect(h.printed.join("\n")).not.toContain("SECRET-KEY-123");
    const token = auth.seen.find((r) => r.path === "/token");
    expect(token?.body.get("resource")).toBe(`${auth.url}/mcp`);
    expect(tokens.resource).toBe(`${auth.url}/mcp`);
    expect(auth.seen.filter((r) => r.raw.includes("SECRET-KEY-123"))).toHaveLength(0);
  });
});
