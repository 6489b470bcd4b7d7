import { spawn } from "node:child_process";
import { rmSync, utimesSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { makeJob } from "../../../src/actors/oauth/context.js";
import { oauthProviderFor, type SvcOAuthProvider } from "../../../src/actors/oauth/provider.js";
import { REFRESH_RETRY_MS, usableTokens } from "../../../src/actors/oauth/refresh.js";
import { svcPaths } from "../../../src/config/paths.js";
import { silentLogger } from "../../../src/io/log.js";
import { TokenStore } from "../../../src/io/oauth/tokenStore.js";
import { processStartTime } from "../../../src/io/processAlive.js";
import { followAuthorization } from "../../fakes/authServer/browserDriver.js";
import { type FakeAs, startFakeAs, startFakeResource } from "../../fakes/authServer/fakeAs.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { harness, loginWith } from "./helpers.js";

let home: TempHome;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
  home?.cleanup();
});

async function loggedIn(
  options: Parameters<typeof startFakeAs>[0] = {},
): Promise<{ as: FakeAs; url: string }> {
  home = tempHome();
  const as = await startFakeAs(options);
  closers.push(as.close);
  const rs = await startFakeResource([as.url]);
  closers.push(rs.close);
  const h = harness(home.dir, "srv", rs.url, { cimd: false, user_agent: "Refresher/2" });
  await loginWith(h);
  return { as, url: rs.url };
}

describe("token refresh", () => {
  it("a stored registration whose secret has expired (client_secret_expires_at passed) is not sent: the login to run is asked for, saying why", async () => {
    const { as, url } = await loggedIn();
    const later = Date.now() + 2 * 3600_000;
    const expiredAt = Math.floor(later / 1000) - 60;
    for (const profile of [undefined, "work"]) {
      const paths = svcPaths(home.dir, profile);
      const job = makeJob(
        "srv",
        { url, auth: "oauth", oauth: { cimd: false } },
        {
          paths,
          logger: silentLogger(),
          now: () => later,
        },
      );
      if (profile !== undefined) {
        const first = makeJob(
          "srv",
          { url, auth: "oauth", oauth: { cimd: false } },
          {
            paths: svcPaths(home.dir),
            logger: silentLogger(),
          },
        );
        job.store.saveMetadata(
          first.store.readMetadata() as NonNullable<ReturnType<TokenStore["readMetadata"]>>,
        );
        job.store.saveTokens(first.store.readTokens() as NonNullable<ReturnType<TokenStore["readTokens"]>>);
        job.store.saveClient(first.store.readClient() as NonNullable<ReturnType<TokenStore["readClient"]>>);
      }
      const client = job.store.readClient() as NonNullable<ReturnType<TokenStore["readClient"]>>;
      job.store.saveClient({ ...client, client_secret: "dcr-secret", client_secret_expires_at: expiredAt });
      await expect(usableTokens(job)).rejects.toThrow(
        `srv: the client registration's secret expired at ${new Date(expiredAt * 1000).toISOString()} — run \`svc mcp login srv${profile === undefined ? "" : ` --profile ${profile}`}\``,
      );
    }
    expect(
      as.seen.filter((r) => r.path === "/token" && r.body.get("grant_type") === "refresh_token"),
    ).toHaveLength(0);
  });

  it("two refreshers (separate stores, one file) never race: one refresh request, both get the new token", async () => {
    const { as, url } = await loggedIn();
    const entry = { url, auth: "oauth", oauth: { cimd: false } };
    const later = Date.now() + 2 * 3600_000;
    const a = makeJob("srv", entry, { paths: svcPaths(home.dir), logger: silentLogger(), now: () => later });
    const b = makeJob("srv", entry, { paths: svcPaths(home.dir), logger: silentLogger(), now: () => later });
    const [ta, tb] = await Promise.all([usableTokens(a), usableTokens(b)]);
    expect(ta.access_token).toBe(tb.access_token);
    expect(ta.access_token).toBe(as.issued[1]);
    expect(
      as.seen.filter((r) => r.path === "/token" && r.body.get("grant_type") === "refresh_token"),
    ).toHaveLength(1);
  });

  it("concurrent refreshers in one process wait for each other however long the refresh takes: one refresh, no lock timeout", async () => {
    let release = () => {};
    const slow = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { as, url } = await loggedIn({ refreshAnswered: () => slow });
    const entry = { url, auth: "oauth", oauth: { cimd: false } };
    const later = Date.now() + 2 * 3600_000;
    // A lock wait far shorter than the refresh (which may take its full 30 s request timeout in earnest).
    const jobs = [1, 2, 3].map(() => {
      const job = makeJob("srv", entry, {
        paths: svcPaths(home.dir),
        logger: silentLogger(),
        now: () => later,
      });
      return { ...job, store: new TokenStore(job.store.dir, "srv", undefined, { lockTimeoutMs: 100 }) };
    });
    const all = Promise.all(jobs.map((job) => usableTokens(job)));
    await new Promise((r) => setTimeout(r, 400));
    release();
    const tokens = await all;
    expect(tokens.map((t) => t.access_token)).toEqual(jobs.map(() => as.issued[1]));
    expect(as.seen.filter((r) => r.body.get("grant_type") === "refresh_token")).toHaveLength(1);
  });

  it("a lock held by a live process is waited for however old its file looks (the clock stepped forward mid-refresh): the refresh it did is used, the used refresh token never sent again", async () => {
    const { as, url } = await loggedIn({ reuseRevokesFamily: true });
    const entry = { url, auth: "oauth", oauth: { cimd: false } };
    const job = makeJob("srv", entry, {
      paths: svcPaths(home.dir),
      logger: silentLogger(),
      now: () => Date.now() + 2 * 3600_000,
    });
    const saved = job.store.readTokens() as NonNullable<ReturnType<TokenStore["readTokens"]>>;
    // Another svc process (alive) holds the lock while it refreshes; the clock has since jumped two minutes.
    const other = spawn("sleep", ["30"], { stdio: "ignore" });
    closers.push(async () => {
      other.kill("SIGKILL");
    });
    await new Promise((r) => other.once("spawn", r));
    const lockPath = `${job.store.tokensPath}.lock`;
    writeFileSync(lockPath, `${other.pid} ${processStartTime(other.pid as number)} 0123456789abcdef`);
    const past = new Date(Date.now() - 120_000);
    utimesSync(lockPath, past, past);
    const ours = usableTokens(job);
    await new Promise((r) => setTimeout(r, 300));
    // The other process's refresh comes back: it saves the rotated tokens and lets go of the lock.
    const answer = await fetch(`${as.url}/token`, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: saved.refresh_token as string,
        client_id: job.store.readClient()?.client_id as string,
      }),
    });
    const rotated = (await answer.json()) as { access_token: string; refresh_token: string };
    job.store.saveTokens({ ...saved, ...rotated, expires_at: Date.now() + 2 * 3600_000 + 3600_000 });
    rmSync(lockPath, { force: true });
    expect((await ours).access_token).toBe(rotated.access_token);
    expect(as.seen.filter((r) => r.body.get("grant_type") === "refresh_token")).toHaveLength(1);
    expect(as.revokedFamilies).toBe(0);
  });

  it("without a refresh token, a token in its last minute is still used; only an expired one needs a login", async () => {
    home = tempHome();
    const job = makeJob(
      "norefresh",
      { url: "http://127.0.0.1:9/mcp", auth: "oauth", oauth: { cimd: false } },
      { paths: svcPaths(home.dir), logger: silentLogger(), now: () => 1_000_000 },
    );
    job.store.saveTokens({
      access_token: "last-minute",
      token_type: "Bearer",
      expires_at: 1_000_000 + 30_000,
      issuer: "http://127.0.0.1:9",
      flow: "browser",
    });
    expect((await usableTokens(job)).access_token).toBe("last-minute");
    const later = { ...job, now: () => 1_000_000 + 30_000 };
    await expect(usableTokens(later)).rejects.toThrow(
      /norefresh: the access token expired and there is no refresh token — run `svc mcp login norefresh`/,
    );
  });

  it("a short-lived token (10 s) is used right after login, not refreshed at once; it is refreshed near its end", async () => {
    home = tempHome();
    const as = await startFakeAs({ accessTtl: 10 });
    closers.push(as.close);
    const rs = await startFakeResource([as.url]);
    closers.push(rs.close);
    const t0 = 5_000_000;
    const h = harness(home.dir, "short", rs.url, { cimd: false }, { now: () => t0 });
    await loginWith(h);
    const at = (ms: number) =>
      makeJob(
        "short",
        { url: rs.url, auth: "oauth", oauth: { cimd: false } },
        {
          paths: svcPaths(home.dir),
          logger: silentLogger(),
          now: () => t0 + ms,
        },
      );
    expect((await usableTokens(at(1000))).access_token).toBe(as.issued[0]);
    expect((await usableTokens(at(8000))).access_token).toBe(as.issued[0]);
    expect(as.seen.filter((r) => r.body.get("grant_type") === "refresh_token")).toHaveLength(0);
    expect((await usableTokens(at(9500))).access_token).toBe(as.issued[1]);
  });

  it("invalid_client for the client metadata document at refresh is recorded in .cimd-off (spec 5.7) and the registration dropped", async () => {
    home = tempHome();
    const as = await startFakeAs({ cimd: true, rejectDocument: true });
    closers.push(as.close);
    const rs = await startFakeResource([as.url]);
    closers.push(rs.close);
    const later = Date.now() + 2 * 3600_000;
    const job = makeJob(
      "doc",
      { url: rs.url, auth: "oauth", oauth: {} },
      {
        paths: svcPaths(home.dir),
        logger: silentLogger(),
        now: () => later,
      },
    );
    job.store.saveClient({
      client_id: "https://app.example/svc.json",
      redirect_uris: [],
      issuer: as.url,
      kind: "cimd",
    });
    job.store.saveTokens({
      access_token: "old",
      token_type: "Bearer",
      refresh_token: "rt-old",
      expires_at: Date.now(),
      issuer: as.url,
      flow: "browser",
    });
    await expect(usableTokens(job)).rejects.toThrow(
      /doc: token refresh failed — .*401.*invalid_client.*run `svc mcp login doc`/,
    );
    expect(job.store.cimdOff()).toBe(true);
    expect(job.store.readClient()).toBeUndefined();
  });

  it("a dynamic registration the server no longer knows (invalid_client at refresh) is dropped so the next login registers again", async () => {
    const { as, url } = await loggedIn({
      refreshError: { status: 401, body: JSON.stringify({ error: "invalid_client" }) },
    });
    const later = Date.now() + 2 * 3600_000;
    const job = makeJob(
      "srv",
      { url, auth: "oauth", oauth: { cimd: false } },
      {
        paths: svcPaths(home.dir),
        logger: silentLogger(),
        now: () => later,
      },
    );
    expect(job.store.readClient()?.kind).toBe("dcr");
    await expect(usableTokens(job)).rejects.toThrow(/invalid_client.*run `svc mcp login srv`/);
    expect(job.store.readClient()).toBeUndefined();
    expect(job.store.cimdOff()).toBe(false);
    expect(job.store.readTokens()?.access_token).toBe(as.issued[0]);
  });

  it("a configured client the server refuses at refresh (invalid_client) names the keys to check, not just a login", async () => {
    home = tempHome();
    const as = await startFakeAs({
      refreshError: { status: 401, body: JSON.stringify({ error: "invalid_client" }) },
    });
    closers.push(as.close);
    const rs = await startFakeResource([as.url]);
    closers.push(rs.close);
    const oauth = { client_id: "pre-1", client_secret: "rotated-away", cimd: false };
    await loginWith(harness(home.dir, "pre", rs.url, oauth));
    const later = Date.now() + 2 * 3600_000;
    const job = makeJob(
      "pre",
      { url: rs.url, auth: "oauth", oauth },
      { paths: svcPaths(home.dir), logger: silentLogger(), now: () => later },
    );
    await expect(usableTokens(job)).rejects.toThrow(
      /^pre: token refresh failed — \S+ answered 401: .*invalid_client.* — check mcp_servers\.pre\.oauth\.client_id, client_secret and token_endpoint_auth_method, then run `svc mcp login pre`$/,
    );
  });

  it("refreshes a token file written without flow or cached metadata (by hand or an older svc) as a browser grant", async () => {
    const { as, url } = await loggedIn();
    const job = makeJob(
      "srv",
      { url, auth: "oauth", oauth: { cimd: false } },
      {
        paths: svcPaths(home.dir),
        logger: silentLogger(),
      },
    );
    const { flow: _flow, ...bare } = job.store.readTokens() as NonNullable<
      ReturnType<typeof job.store.readTokens>
    >;
    job.store.saveTokens({ ...bare, expires_at: Date.now() - 1000 } as typeof bare & { flow: "browser" });
    rmSync(job.store.metaPath);
    const t = await usableTokens(job);
    expect(t.access_token).toBe(as.issued[1]);
    expect(t.flow).toBe("browser");
  });

  it("a token response whose expires_in is null or empty is a token without a stated lifetime: used as it is, not refreshed at every request", async () => {
    for (const expires of [null, ""]) {
      home = tempHome();
      const as = await startFakeAs({ tokenResponse: (t) => ({ ...t, expires_in: expires }) });
      closers.push(as.close);
      const rs = await startFakeResource([as.url]);
      closers.push(rs.close);
      const h = harness(home.dir, "nolife", rs.url, { cimd: false });
      const saved = await loginWith(h);
      expect(saved.expires_at).toBeUndefined();
      expect((await usableTokens(h.job)).access_token).toBe(saved.access_token);
      expect(as.seen.filter((r) => r.body.get("grant_type") === "refresh_token")).toHaveLength(0);
      home.cleanup();
    }
  });

  it("a token response whose expires_in is 0 or negative states no usable lifetime: the token serves until refused, without a refresh per request", async () => {
    for (const expires of [0, "0", -5]) {
      home = tempHome();
      const as = await startFakeAs({ tokenResponse: (t) => ({ ...t, expires_in: expires }) });
      closers.push(as.close);
      const rs = await startFakeResource([as.url]);
      closers.push(rs.close);
      const h = harness(home.dir, "zerolife", rs.url, { cimd: false });
      const saved = await loginWith(h);
      expect(saved.expires_at).toBeUndefined();
      // Ten requests at once (the SDK asks for the token before each): none of them refreshes.
      const handed = await Promise.all(Array.from({ length: 10 }, () => usableTokens(h.job)));
      expect(handed.every((t) => t.access_token === saved.access_token)).toBe(true);
      const refreshes = () => as.seen.filter((r) => r.body.get("grant_type") === "refresh_token");
      expect(refreshes()).toHaveLength(0);
      // Refused by the server: refreshed once, and the refreshed token (expires_in 0 again) serves as well.
      const renewed = await usableTokens(h.job, { rejected: saved.access_token });
      expect(renewed.access_token).toBe(as.issued[1]);
      expect(renewed.expires_at).toBeUndefined();
      expect((await usableTokens(h.job)).access_token).toBe(as.issued[1]);
      expect(refreshes()).toHaveLength(1);
      home.cleanup();
    }
  });

  it("does not refresh a token that is still valid", async () => {
    const { as, url } = await loggedIn();
    const job = makeJob(
      "srv",
      { url, auth: "oauth", oauth: { cimd: false } },
      { paths: svcPaths(home.dir), logger: silentLogger() },
    );
    expect((await usableTokens(job)).access_token).toBe(as.issued[0]);
    expect(as.seen.filter((r) => r.body.get("grant_type") === "refresh_token")).toHaveLength(0);
  });

  it("refreshes with the configured User-Agent on the token endpoint and keeps an absolute expiry", async () => {
    const { as, url } = await loggedIn();
    const now = Date.now() + 2 * 3600_000;
    const job = makeJob(
      "srv",
      { url, auth: "oauth", oauth: { cimd: false, user_agent: "Refresher/2" } },
      { paths: svcPaths(home.dir), logger: silentLogger(), now: () => now },
    );
    const t = await usableTokens(job);
    expect(t.expires_at).toBe(now + 3600_000);
    const refresh = as.seen.find((r) => r.body.get("grant_type") === "refresh_token");
    expect(refresh?.headers["user-agent"]).toBe("Refresher/2");
    expect(refresh?.body.get("resource")).toBe(url);
  });

  it("a refresh answer without scope or id_token keeps the saved ones (RFC 6749 5.1 and 6: the scope is unchanged; OpenID Connect Core 12.2), one that states them replaces them; unknown fields are not saved", async () => {
    let answers = 0;
    const { url } = await loggedIn({
      tokenResponse: (t) => {
        answers++;
        if (answers === 1)
          return { ...t, scope: "mcp files:read", id_token: "eyJhbGciOiJub25lIn0.e30.login" };
        if (answers === 2) return { ...t, refresh_token_expires_in: 86400, vendor_field: "x" };
        return { ...t, scope: "mcp", id_token: "eyJhbGciOiJub25lIn0.e30.third" };
      },
    });
    const jobAt = (ms: number) =>
      makeJob(
        "srv",
        { url, auth: "oauth", oauth: { cimd: false } },
        { paths: svcPaths(home.dir), logger: silentLogger(), now: () => ms },
      );
    const later = Date.now() + 2 * 3600_000;
    const refreshed = await usableTokens(jobAt(later));
    expect(refreshed.scope).toBe("mcp files:read");
    expect(refreshed.id_token).toBe("eyJhbGciOiJub25lIn0.e30.login");
    const saved = jobAt(later).store.readTokens() as unknown as Record<string, unknown>;
    expect(saved.scope).toBe("mcp files:read");
    expect(saved.id_token).toBe("eyJhbGciOiJub25lIn0.e30.login");
    expect(saved).not.toHaveProperty("vendor_field");
    expect(saved).not.toHaveProperty("refresh_token_expires_in");
    const again = await usableTokens(jobAt(later + 2 * 3600_000));
    expect(again.scope).toBe("mcp");
    expect(again.id_token).toBe("eyJhbGciOiJub25lIn0.e30.third");
  });

  describe("a token endpoint that gives no OAuth answer (503, unreachable, a 4xx without an OAuth error) during refresh", () => {
    const jobAt = (url: string, ms: number) =>
      makeJob(
        "srv",
        { url, auth: "oauth", oauth: { cimd: false } },
        { paths: svcPaths(home.dir), logger: silentLogger(), now: () => ms },
      );

    it("a token in its last minute keeps serving; the saved login is untouched", async () => {
      const { as, url } = await loggedIn({ refreshError: { status: 503, body: "upstream down" } });
      const saved = jobAt(url, 0).store.readTokens() as NonNullable<ReturnType<TokenStore["readTokens"]>>;
      const job = jobAt(url, (saved.expires_at as number) - 30_000);
      expect((await usableTokens(job)).access_token).toBe(as.issued[0]);
      expect(as.seen.filter((r) => r.body.get("grant_type") === "refresh_token")).toHaveLength(1);
      expect(job.store.readTokens()).toEqual(saved);
      expect(job.store.readClient()?.kind).toBe("dcr");
    });

    it("an expired token fails the connect naming the status, without asking for a new login", async () => {
      const { url } = await loggedIn({ refreshError: { status: 503, body: "upstream down" } });
      const job = jobAt(url, Date.now() + 2 * 3600_000);
      const saved = job.store.readTokens();
      const err = (await usableTokens(job).catch((e: unknown) => e)) as Error;
      expect(err.message).toMatch(/^srv: token refresh failed — \S+\/token answered 503: upstream down/);
      expect(err.message).not.toMatch(/svc mcp login/);
      expect(job.store.readTokens()).toEqual(saved);
      expect(job.store.readClient()?.kind).toBe("dcr");
    });

    it("after a 429 the token serves and the refresh is not tried again for 30 s, however many requests ask", async () => {
      const { as, url } = await loggedIn({ refreshError: { status: 429, body: "slow down" } });
      const saved = jobAt(url, 0).store.readTokens() as NonNullable<ReturnType<TokenStore["readTokens"]>>;
      const t0 = (saved.expires_at as number) - 50_000;
      const refreshes = () => as.seen.filter((r) => r.body.get("grant_type") === "refresh_token").length;
      for (const at of [t0, t0, t0, t0 + REFRESH_RETRY_MS - 1])
        expect((await usableTokens(jobAt(url, at))).access_token).toBe(as.issued[0]);
      expect(refreshes()).toBe(1);
      expect((await usableTokens(jobAt(url, t0 + REFRESH_RETRY_MS))).access_token).toBe(as.issued[0]);
      expect(refreshes()).toBe(2);
    });

    it("requests that waited on the lock while that refresh got a 503 use the serving token without sending the refresh again", async () => {
      const { as, url } = await loggedIn({ refreshError: { status: 503, body: "upstream down" } });
      const saved = jobAt(url, 0).store.readTokens() as NonNullable<ReturnType<TokenStore["readTokens"]>>;
      const t0 = (saved.expires_at as number) - 50_000;
      const concurrent = await Promise.all([1, 2, 3].map(() => usableTokens(jobAt(url, t0))));
      expect(concurrent.map((t) => t.access_token)).toEqual([1, 2, 3].map(() => as.issued[0]));
      expect(as.seen.filter((r) => r.body.get("grant_type") === "refresh_token")).toHaveLength(1);
    });

    it("an expired token: connects that waited on the lock while its refresh got a 503 fail with that answer, without sending it again", async () => {
      const { as, url } = await loggedIn({ refreshError: { status: 503, body: "upstream down" } });
      const later = Date.now() + 2 * 3600_000;
      const results = await Promise.allSettled([1, 2, 3].map(() => usableTokens(jobAt(url, later))));
      for (const result of results)
        expect(result.status === "rejected" && (result.reason as Error).message).toMatch(
          /^srv: token refresh failed — \S+\/token answered 503: upstream down — the saved login is kept; svc tries again on the next connect$/,
        );
      expect(as.seen.filter((r) => r.body.get("grant_type") === "refresh_token")).toHaveLength(1);
      // A later connect tries again.
      await expect(usableTokens(jobAt(url, later))).rejects.toThrow(/answered 503/);
      expect(as.seen.filter((r) => r.body.get("grant_type") === "refresh_token")).toHaveLength(2);
    });

    it("a 200 that is no token response (a login or proxy page) names the endpoint, status and excerpt, and asks for no new login", async () => {
      const { url } = await loggedIn({ refreshError: { status: 200, body: "<html>login page</html>" } });
      const job = jobAt(url, Date.now() + 2 * 3600_000);
      const saved = job.store.readTokens();
      const err = (await usableTokens(job).catch((e: unknown) => e)) as Error;
      expect(err.message).toMatch(
        /^srv: token refresh failed — \S+\/token answered 200: <html>login page<\/html>/,
      );
      expect(err.message).not.toMatch(/svc mcp login/);
      expect(job.store.readTokens()).toEqual(saved);
    });

    // Answers that carry no RFC 6749 error object (JSON or form-encoded with a string `error`): a firewall's,
    // a proxy's or a web server's, not the authorization server's word on the grant.
    const noOAuthError = [
      [
        "a firewall's 403 page",
        { status: 403, body: "<html>Request blocked by firewall</html>", contentType: "text/html" },
      ],
      ["a 400 with an empty body", { status: 400, body: "", contentType: "text/plain" }],
      [
        "a 400 HTML page",
        { status: 400, body: "<html><body>Bad Request</body></html>", contentType: "text/html" },
      ],
      ["a proxy's 404", { status: 404, body: "Not Found", contentType: "text/plain" }],
      ["a 401 JSON body whose error is no string", { status: 401, body: '{"error":{"code":401}}' }],
    ] as const;

    it.each(noOAuthError)(
      "%s: a token in its last minute keeps serving, the refresh is tried again after 30 s, the saved login is untouched",
      async (_, refreshError) => {
        const { as, url } = await loggedIn({ refreshError });
        const saved = jobAt(url, 0).store.readTokens() as NonNullable<ReturnType<TokenStore["readTokens"]>>;
        const t0 = (saved.expires_at as number) - 50_000;
        const refreshes = () => as.seen.filter((r) => r.body.get("grant_type") === "refresh_token").length;
        for (const at of [t0, t0, t0 + REFRESH_RETRY_MS - 1])
          expect((await usableTokens(jobAt(url, at))).access_token).toBe(as.issued[0]);
        expect(refreshes()).toBe(1);
        expect((await usableTokens(jobAt(url, t0 + REFRESH_RETRY_MS))).access_token).toBe(as.issued[0]);
        expect(refreshes()).toBe(2);
        const job = jobAt(url, 0);
        expect(job.store.readTokens()).toEqual(saved);
        expect(job.store.readClient()?.kind).toBe("dcr");
      },
    );

    it.each(noOAuthError)(
      "%s: an expired token fails the connect naming the answer, keeping the saved login and asking for none; the next connect tries again",
      async (_, refreshError) => {
        const { as, url } = await loggedIn({ refreshError });
        const later = Date.now() + 2 * 3600_000;
        const job = jobAt(url, later);
        const saved = job.store.readTokens();
        const err = (await usableTokens(job).catch((e: unknown) => e)) as Error;
        expect(err.message).toMatch(
          new RegExp(
            `^srv: token refresh failed — \\S+/token answered ${refreshError.status}.* — the saved login is kept; svc tries again on the next connect$`,
          ),
        );
        expect(err.message).not.toMatch(/svc mcp login/);
        expect(job.store.readTokens()).toEqual(saved);
        expect(job.store.readClient()?.kind).toBe("dcr");
        await expect(usableTokens(jobAt(url, later))).rejects.toThrow(/the saved login is kept/);
        expect(as.seen.filter((r) => r.body.get("grant_type") === "refresh_token")).toHaveLength(2);
      },
    );

    it("an interactive connect does not open a browser when the token endpoint answers a firewall's 403 page", async () => {
      const { url } = await loggedIn({
        refreshError: {
          status: 403,
          body: "<html>Request blocked by firewall</html>",
          contentType: "text/html",
        },
      });
      const opened: string[] = [];
      const printed: string[] = [];
      const provider = oauthProviderFor(
        "srv",
        { url, auth: "oauth", oauth: { cimd: false } },
        {
          interactive: true,
          isTTY: true,
          paths: svcPaths(home.dir),
          now: () => Date.now() + 2 * 3600_000,
          print: (line) => printed.push(line),
          openBrowser: async (u) => {
            opened.push(u);
          },
        },
      );
      await expect(provider.tokens()).rejects.toThrow(
        /^srv: token refresh failed — \S+\/token answered 403: <html>Request blocked by firewall<\/html> — the saved login is kept; svc tries again on the next connect$/,
      );
      expect(opened).toHaveLength(0);
      expect(printed).toEqual([]);
    });

    it("an interactive connect does not open a browser when the authorization server is unreachable", async () => {
      const { as, url } = await loggedIn();
      const saved = jobAt(url, 0).store.readTokens() as NonNullable<ReturnType<TokenStore["readTokens"]>>;
      jobAt(url, 0).store.saveTokens({ ...saved, expires_at: Date.now() - 1000 });
      await as.close();
      const opened: string[] = [];
      const provider = oauthProviderFor(
        "srv",
        { url, auth: "oauth", oauth: { cimd: false } },
        {
          interactive: true,
          isTTY: true,
          paths: svcPaths(home.dir),
          print: () => {},
          openBrowser: async (u) => {
            opened.push(u);
          },
        },
      );
      await expect(provider.tokens()).rejects.toThrow(/srv: token refresh failed — .*unreachable/);
      expect(opened).toHaveLength(0);
    });
  });

  it("tokens saved for another resource (the entry's url changed) are never handed out: a login is asked for", async () => {
    const { as, url } = await loggedIn();
    const other = await startFakeResource([as.url]);
    closers.push(other.close);
    const moved = makeJob(
      "srv",
      { url: other.url, auth: "oauth", oauth: { cimd: false } },
      { paths: svcPaths(home.dir), logger: silentLogger() },
    );
    await expect(usableTokens(moved)).rejects.toThrow(
      `srv: the saved login is for ${url}, not ${other.url} (mcp_servers.srv.url changed) — run \`svc mcp login srv\``,
    );
    const provider = oauthProviderFor(
      "srv",
      { url: other.url, auth: "oauth", oauth: { cimd: false } },
      {
        interactive: false,
        paths: svcPaths(home.dir),
      },
    );
    await expect(provider.tokens()).rejects.toThrow(/the saved login is for/);
    // The same server under its own URL still gets them.
    const same = makeJob(
      "srv",
      { url, auth: "oauth", oauth: { cimd: false } },
      { paths: svcPaths(home.dir), logger: silentLogger() },
    );
    expect((await usableTokens(same)).access_token).toBe(as.issued[0]);
  });

  it("GitHub's bad_refresh_token (answered 200) is a refused refresh token too: it is not sent again", async () => {
    const { as, url } = await loggedIn({
      refreshError: { status: 200, body: JSON.stringify({ error: "bad_refresh_token" }) },
    });
    const later = Date.now() + 2 * 3600_000;
    for (let attempt = 0; attempt < 2; attempt++) {
      const job = makeJob(
        "srv",
        { url, auth: "oauth", oauth: { cimd: false } },
        { paths: svcPaths(home.dir), logger: silentLogger(), now: () => later + attempt * 60_000 },
      );
      await expect(usableTokens(job)).rejects.toThrow(/bad_refresh_token.*run `svc mcp login srv`/);
    }
    expect(as.seen.filter((r) => r.body.get("grant_type") === "refresh_token")).toHaveLength(1);
  });

  it("a refresh token refused with invalid_grant is not sent again: later connects ask for a login at once, a new login works", async () => {
    const { as, url } = await loggedIn({
      refreshError: {
        status: 400,
        body: JSON.stringify({ error: "invalid_grant", error_description: "revoked" }),
      },
    });
    const at = (ms: number) =>
      makeJob(
        "srv",
        { url, auth: "oauth", oauth: { cimd: false } },
        { paths: svcPaths(home.dir), logger: silentLogger(), now: () => ms },
      );
    const later = Date.now() + 2 * 3600_000;
    const refreshes = () => as.seen.filter((r) => r.body.get("grant_type") === "refresh_token").length;
    for (let attempt = 0; attempt < 3; attempt++) {
      await expect(usableTokens(at(later + attempt * 60_000))).rejects.toThrow(
        /srv: token refresh failed — .*answered 400.*invalid_grant.*run `svc mcp login srv`/,
      );
    }
    expect(refreshes()).toBe(1);
    // A new login stores a new refresh token, which is tried again.
    const saved = at(0).store.readTokens() as NonNullable<ReturnType<TokenStore["readTokens"]>>;
    at(0).store.saveTokens({ ...saved, refresh_token: "rt-from-a-new-login" });
    await expect(usableTokens(at(later))).rejects.toThrow(/invalid_grant/);
    expect(refreshes()).toBe(2);
  });
  it("a CLI-driven connect whose refresh is refused says why before the browser login that replaces the saved one", async () => {
    const { url } = await loggedIn({
      refreshError: {
        status: 400,
        body: JSON.stringify({ error: "invalid_grant", error_description: "revoked" }),
      },
    });
    const printed: string[] = [];
    const provider = oauthProviderFor(
      "srv",
      { url, auth: "oauth", oauth: { cimd: false } },
      {
        interactive: true,
        paths: svcPaths(home.dir),
        now: () => Date.now() + 2 * 3600_000,
        print: (line) => printed.push(line),
        openBrowser: async (u) => {
          await followAuthorization(u);
        },
      },
    );
    expect(await provider.tokens()).toBeDefined();
    const urlAt = printed.findIndex((line) => line.startsWith("Open this URL"));
    expect(printed.slice(0, Math.max(urlAt, 0))).toEqual([
      expect.stringMatching(/^srv: token refresh failed — .*invalid_grant.* — logging in again$/),
    ]);
  });

  it("so does one whose unexpired token the server refused (revoked) when the refresh that follows is refused too", async () => {
    const { as, url } = await loggedIn({
      refreshError: {
        status: 400,
        body: JSON.stringify({ error: "invalid_grant", error_description: "revoked" }),
      },
    });
    const printed: string[] = [];
    const opened: string[] = [];
    const provider = oauthProviderFor(
      "srv",
      { url, auth: "oauth", oauth: { cimd: false } },
      {
        interactive: true,
        paths: svcPaths(home.dir),
        print: (line) => printed.push(line),
        openBrowser: async (u) => {
          opened.push(u);
          await followAuthorization(u);
        },
      },
    ) as SvcOAuthProvider;
    const sent = (await provider.tokens())?.access_token as string;
    // The fake resource answers every bearer 401: the token is refused before its expiry.
    await provider.authorizedFetch(fetch)(url, {
      method: "POST",
      headers: { authorization: `Bearer ${sent}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(as.seen.filter((r) => r.body.get("grant_type") === "refresh_token")).toHaveLength(1);
    expect(opened).toHaveLength(1);
    const urlAt = printed.findIndex((line) => line.startsWith("Open this URL"));
    expect(printed.slice(0, Math.max(urlAt, 0))).toEqual([
      expect.stringMatching(/^srv: token refresh failed — .*invalid_grant.* — logging in again$/),
    ]);
  });
});
