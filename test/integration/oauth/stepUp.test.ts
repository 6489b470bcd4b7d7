import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { oauthProviderFor, type SvcOAuthProvider } from "../../../src/actors/oauth/provider.js";
import { svcPaths } from "../../../src/config/paths.js";
import { followAuthorization } from "../../fakes/authServer/browserDriver.js";
import {
  type FakeAs,
  type FakeResource,
  startFakeAs,
  startFakeResource,
} from "../../fakes/authServer/fakeAs.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { harness, loginWith } from "./helpers.js";

/** MCP step-up authorization: 403 with `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."`. */
let home: TempHome;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
  home?.cleanup();
});

async function loggedIn(
  status: 401 | 403 = 403,
): Promise<{ as: FakeAs; rs: FakeResource; h: ReturnType<typeof harness> }> {
  home = tempHome();
  const as = await startFakeAs();
  closers.push(as.close);
  const rs = await startFakeResource([as.url], {
    requireScope: { scope: "mcp admin", scopeOf: as.scopeOf, status },
  });
  closers.push(rs.close);
  const h = harness(home.dir, "up", rs.url, { cimd: false });
  await loginWith(h);
  expect(as.scopeOf(as.issued[0] as string)).toBe("mcp");
  return { as, rs, h };
}

function post(fetchFn: ReturnType<SvcOAuthProvider["authorizedFetch"]>, url: string, token: string) {
  return fetchFn(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: "{}",
  });
}

describe("403 insufficient_scope (step-up)", () => {
  it("a CLI-driven connect logs in again asking for the extra scope, then sends the request again", async () => {
    const { as, rs, h } = await loggedIn();
    const opened: string[] = [];
    const provider = oauthProviderFor(
      "up",
      { url: rs.url, auth: "oauth", oauth: { cimd: false } },
      {
        interactive: true,
        paths: svcPaths(home.dir),
        print: () => {},
        openBrowser: async (u) => {
          opened.push(u);
          await followAuthorization(u);
        },
      },
    ) as SvcOAuthProvider;
    const res = await post(
      provider.authorizedFetch(fetch),
      rs.url,
      h.job.store.readTokens()?.access_token ?? "",
    );
    expect(res.status).toBe(200);
    expect(opened).toHaveLength(1);
    expect(new URL(opened[0] as string).searchParams.get("scope")).toBe("mcp admin");
    expect(as.scopeOf(h.job.store.readTokens()?.access_token ?? "")).toBe("mcp admin");
  });

  it("a 401 insufficient_scope naming the scope (servers that answer it so) is a step-up as well: no refresh, a login asking for it, the request sent again", async () => {
    const { as, rs, h } = await loggedIn(401);
    const opened: string[] = [];
    const options = {
      paths: svcPaths(home.dir),
      print: () => {},
      openBrowser: async (u: string) => {
        opened.push(u);
        await followAuthorization(u);
      },
    };
    const entry = { url: rs.url, auth: "oauth", oauth: { cimd: false } };
    const first = h.job.store.readTokens()?.access_token ?? "";
    const background = oauthProviderFor("up", entry, { ...options, interactive: false }) as SvcOAuthProvider;
    await expect(post(background.authorizedFetch(fetch), rs.url, first)).rejects.toThrow(
      /^up: the server needs scope "mcp admin" for this request — run `svc mcp login up`$/,
    );
    const cli = oauthProviderFor("up", entry, { ...options, interactive: true }) as SvcOAuthProvider;
    const res = await post(cli.authorizedFetch(fetch), rs.url, first);
    expect(res.status).toBe(200);
    expect(opened).toHaveLength(1);
    expect(new URL(opened[0] as string).searchParams.get("scope")).toBe("mcp admin");
    expect(as.seen.filter((r) => r.body.get("grant_type") === "refresh_token")).toHaveLength(0);
  });

  it("a background connect fails naming the scope and svc mcp login; the next login asks for that scope", async () => {
    const { rs, h } = await loggedIn();
    const provider = oauthProviderFor(
      "up",
      { url: rs.url, auth: "oauth", oauth: { cimd: false } },
      {
        interactive: false,
        paths: svcPaths(home.dir),
      },
    ) as SvcOAuthProvider;
    const first = h.job.store.readTokens()?.access_token ?? "";
    await expect(post(provider.authorizedFetch(fetch), rs.url, first)).rejects.toThrow(
      /^up: the server needs scope "mcp admin" for this request — run `svc mcp login up`$/,
    );
    expect(h.job.store.readTokens()?.access_token).toBe(first);
    const again = harness(home.dir, "up", rs.url, { cimd: false }, { freshClient: true });
    await loginWith(again);
    expect(new URL(again.opened[0] as string).searchParams.get("scope")).toBe("mcp admin");
  });

  it("without a discovery cache (<server>.meta.json removed or damaged) the scope is still recorded: the next login asks for it", async () => {
    const { rs, h } = await loggedIn();
    rmSync(h.job.store.metaPath);
    const provider = oauthProviderFor(
      "up",
      { url: rs.url, auth: "oauth", oauth: { cimd: false } },
      { interactive: false, paths: svcPaths(home.dir) },
    ) as SvcOAuthProvider;
    const first = h.job.store.readTokens()?.access_token ?? "";
    await expect(post(provider.authorizedFetch(fetch), rs.url, first)).rejects.toThrow(
      /^up: the server needs scope "mcp admin" for this request — run `svc mcp login up`$/,
    );
    const again = harness(home.dir, "up", rs.url, { cimd: false }, { freshClient: true });
    await loginWith(again);
    expect(new URL(again.opened[0] as string).searchParams.get("scope")).toBe("mcp admin");
  });

  it("when the new login is not granted the scope either, the request fails saying so instead of logging in again", async () => {
    home = tempHome();
    const as = await startFakeAs();
    closers.push(as.close);
    // The authorization server never grants "admin": every token holds only "mcp".
    const rs = await startFakeResource([as.url], {
      requireScope: { scope: "mcp admin", scopeOf: () => "mcp" },
    });
    closers.push(rs.close);
    const h = harness(home.dir, "stingy", rs.url, { cimd: false });
    await loginWith(h);
    const opened: string[] = [];
    const provider = oauthProviderFor(
      "stingy",
      { url: rs.url, auth: "oauth", oauth: { cimd: false } },
      {
        interactive: true,
        paths: svcPaths(home.dir),
        print: () => {},
        openBrowser: async (u) => {
          opened.push(u);
          await followAuthorization(u);
        },
      },
    ) as SvcOAuthProvider;
    await expect(
      post(provider.authorizedFetch(fetch), rs.url, h.job.store.readTokens()?.access_token ?? ""),
    ).rejects.toThrow(
      /^stingy: the server still needs scope "mcp admin" after a new login — the authorization server did not grant it; ask its operator to allow that scope for this client, then run `svc mcp login stingy`$/,
    );
    expect(opened).toHaveLength(1);
  });

  it("a 403 insufficient_scope that names no scope fails saying which key to set, without a login", async () => {
    home = tempHome();
    const as = await startFakeAs();
    closers.push(as.close);
    const rs = await startFakeResource([as.url], {
      requireScope: { scope: "mcp admin", scopeOf: as.scopeOf, unnamed: true },
    });
    closers.push(rs.close);
    const h = harness(home.dir, "vague", rs.url, { cimd: false });
    await loginWith(h);
    const opened: string[] = [];
    const provider = oauthProviderFor(
      "vague",
      { url: rs.url, auth: "oauth", oauth: { cimd: false } },
      {
        interactive: true,
        paths: svcPaths(home.dir),
        print: () => {},
        openBrowser: async (u) => {
          opened.push(u);
        },
      },
    ) as SvcOAuthProvider;
    await expect(
      post(provider.authorizedFetch(fetch), rs.url, h.job.store.readTokens()?.access_token ?? ""),
    ).rejects.toThrow(
      /^vague: the server refused the request for lack of scope \(403 insufficient_scope\) without naming the scope — set mcp_servers\.vague\.oauth\.scope to the scopes it needs, then run `svc mcp login vague`$/,
    );
    expect(opened).toHaveLength(0);
  });
});
