import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createActor, fromPromise, SimulatedClock, waitFor } from "xstate";
import { makeJob } from "../../../src/actors/oauth/context.js";
import { SvcOAuthProvider } from "../../../src/actors/oauth/provider.js";
import { usableTokens } from "../../../src/actors/oauth/refresh.js";
import { runLogin } from "../../../src/actors/oauth/runLogin.js";
import { startSystem } from "../../../src/actors/system.js";
import { svcPaths } from "../../../src/config/paths.js";
import { silentLogger } from "../../../src/io/log.js";
import { DEVICE_GRANT } from "../../../src/io/oauth/discovery.js";
import {
  oauthLoginMachine,
  type PreparedLogin,
  type PrepareInput,
} from "../../../src/machines/oauthLogin.js";

/**
 * The gateway keeps one set of MCP connections per profile: a named profile's server that has no login
 * of its own fails its background connect with the login to run, which must be that profile's.
 */
const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

/** A discovery cached for the authorization server `as` (its minimal RFC 8414 metadata). */
function cachedDiscovery(as: string) {
  return {
    authorizationServerUrl: as,
    authorizationServerMetadata: {
      issuer: as,
      authorization_endpoint: `${as}/authorize`,
      token_endpoint: `${as}/token`,
      response_types_supported: ["code"],
    },
    fetched_at: 0,
  };
}

function job(profile: string | undefined, flow?: "device") {
  const home = mkdtempSync(join(tmpdir(), "svc-login-advice-"));
  homes.push(home);
  return makeJob(
    "notes",
    { url: "https://mcp.example.test/mcp", auth: "oauth", oauth: flow === undefined ? {} : { flow } },
    { paths: svcPaths(home, profile), logger: silentLogger(), fetch: async () => new Response("") },
  );
}

describe("the login a server without tokens asks for names the profile the tokens belong to", () => {
  it("a named profile's: svc mcp login <server> --profile <name>", async () => {
    await expect(usableTokens(job("work"))).rejects.toThrow(
      "notes: not logged in — run `svc mcp login notes --profile work`",
    );
    await expect(usableTokens(job("work", "device"))).rejects.toThrow(
      "notes: not logged in — run `svc mcp login notes --profile work --flow device`",
    );
  });

  it("the default profile's: svc mcp login <server>, as before", async () => {
    await expect(usableTokens(job(undefined))).rejects.toThrow(
      "notes: not logged in — run `svc mcp login notes`",
    );
  });
});

describe("every other login advice names the profile (and the device flow of a device grant)", () => {
  it("a damaged token file of a named profile: its own login replaces it", async () => {
    const j = job("work");
    mkdirSync(j.store.dir, { recursive: true });
    writeFileSync(j.store.tokensPath, "{not json");
    await expect(usableTokens(j)).rejects.toThrow(
      "not valid JSON — run `svc mcp login notes --profile work`, which replaces it",
    );
  });

  it("a device login without a terminal", async () => {
    const system = startSystem({ logger: silentLogger() });
    try {
      await expect(runLogin(job("work"), { flow: "device", system, isTTY: false })).rejects.toThrow(
        "run `svc mcp login notes --profile work --flow device` in an interactive shell",
      );
    } finally {
      system.shutdown();
    }
  });

  it("a device login on a server without the device flow: the browser login to run instead", async () => {
    const as = "https://as.test";
    const answers: Record<string, () => Response> = {
      "https://mcp.example.test/mcp": () =>
        new Response(null, {
          status: 401,
          headers: {
            "www-authenticate": 'Bearer resource_metadata="https://mcp.example.test/.well-known/prm"',
          },
        }),
      "https://mcp.example.test/.well-known/prm": () =>
        Response.json({ resource: "https://mcp.example.test/mcp", authorization_servers: [as] }),
      [`${as}/.well-known/oauth-authorization-server`]: () =>
        Response.json({ ...cachedDiscovery(as).authorizationServerMetadata }),
    };
    const j = {
      ...job("work", "device"),
      fetch: async (url: string | URL) =>
        (answers[String(url)] ?? (() => new Response(null, { status: 404 })))(),
    };
    const system = startSystem({ logger: silentLogger() });
    try {
      await expect(runLogin(j, { flow: "device", system, isTTY: true })).rejects.toThrow(
        "log in with `svc mcp login notes --profile work --flow browser` or remove oauth.flow: device",
      );
    } finally {
      system.shutdown();
    }
  });

  it("a browser login that timed out", () => {
    const clock = new SimulatedClock();
    const actor = createActor(
      oauthLoginMachine.provide({
        actors: {
          prepare: fromPromise<PreparedLogin, PrepareInput>(async () => ({
            authorizationUrl: "https://as.test/a",
            usesDocument: false,
            handle: {},
          })),
          awaitRedirect: fromPromise<unknown, PreparedLogin>(() => new Promise<never>(() => {})),
        },
      }),
      {
        input: {
          serverName: "notes",
          loginCommand: "svc mcp login notes --profile work",
          job: {},
          timeoutMs: 1000,
        },
        clock,
      },
    ).start();
    return waitFor(actor, (s) => s.matches("awaitingRedirect")).then(() => {
      clock.increment(1000);
      const out = actor.getSnapshot().output;
      expect(out?.ok === false && out.error.message).toMatch(
        "Run `svc mcp login notes --profile work` again",
      );
    });
  });

  it("a server refusing even a newly issued token of a device grant", async () => {
    const j = job("work");
    const as = "https://as.test";
    j.store.saveMetadata(cachedDiscovery(as));
    j.store.saveClient({
      client_id: "c",
      redirect_uris: [],
      issuer: as,
      kind: "dcr",
      grant_types: [DEVICE_GRANT],
    });
    j.store.saveTokens({
      access_token: "old",
      token_type: "Bearer",
      refresh_token: "r1",
      issuer: as,
      resource: "https://mcp.example.test/mcp",
      flow: "device",
    });
    const provider = new SvcOAuthProvider(
      {
        ...j,
        fetch: async () =>
          Response.json({ access_token: "new", token_type: "Bearer", expires_in: 3600 }, { status: 200 }),
      },
      { interactive: false },
    );
    const refusing = provider.authorizedFetch(
      async () =>
        new Response(null, { status: 401, headers: { "www-authenticate": 'Bearer error="invalid_token"' } }),
    );
    const res = await refusing("https://mcp.example.test/mcp", { headers: { authorization: "Bearer old" } });
    expect(res.status).toBe(401);
    await expect(provider.redirectToAuthorization()).rejects.toThrow(
      "then run `svc mcp login notes --profile work --flow device`",
    );
  });
});

describe("the SDK's own auth flow never registers a client behind svc's back", () => {
  it("a stored registration of another server than the cached discovery names is not handed to it", async () => {
    const j = job(undefined);
    j.store.saveClient({ client_id: "c", redirect_uris: [], issuer: "https://one.test", kind: "dcr" });
    j.store.saveMetadata(cachedDiscovery("https://one.test"));
    const provider = new SvcOAuthProvider(j, { interactive: false });
    await expect(provider.clientInformation()).resolves.toMatchObject({ client_id: "c" });
    // A later login that failed cached another server's discovery: the SDK would discard the
    // registration there and register one of its own.
    j.store.saveMetadata(cachedDiscovery("https://two.test"));
    await expect(provider.clientInformation()).rejects.toThrow(
      "notes: the client registration is for https://one.test, not the authorization server now in use — run `svc mcp login notes`",
    );
  });
});
