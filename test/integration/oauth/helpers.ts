import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { createActor, SimulatedClock, waitFor } from "xstate";
import { policyApprovals } from "../../../src/actors/mcp/approvals.js";
import { McpHub } from "../../../src/actors/mcp/hub.js";
import { makeJob, type OAuthJob } from "../../../src/actors/oauth/context.js";
import { deviceLoginLogic } from "../../../src/actors/oauth/deviceLogin.js";
import { oauthProviderFor } from "../../../src/actors/oauth/provider.js";
import { runLogin } from "../../../src/actors/oauth/runLogin.js";
import { type GatewaySystem, startSystem } from "../../../src/actors/system.js";
import { svcPaths } from "../../../src/config/paths.js";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { silentLogger } from "../../../src/io/log.js";
import type { OAuthSettings } from "../../../src/io/oauth/settings.js";
import type { StoredTokens } from "../../../src/io/oauth/tokenStore.js";
import { followAuthorization } from "../../fakes/authServer/browserDriver.js";
import {
  type FakeAs,
  type FakeResource,
  startFakeAs,
  startFakeResource,
} from "../../fakes/authServer/fakeAs.js";
import { type ProtectedMcp, startProtectedMcp } from "../../fakes/authServer/mcpServer.js";
import { type OidcServer, startOidc } from "../../fakes/authServer/oidc.js";
import { captureLogger } from "../../fakes/logCapture.js";
import type { TempHome } from "../../helpers/home.js";

export interface JobHarness {
  readonly job: OAuthJob;
  readonly printed: string[];
  readonly opened: string[];
}

/** A login job on a temp SVC_HOME whose "browser" follows the authorization redirects over HTTP. */
export function harness(
  home: string,
  serverName: string,
  url: string,
  oauth: OAuthSettings = {},
  extra: Partial<OAuthJob> = {},
): JobHarness {
  const printed: string[] = [];
  const opened: string[] = [];
  const job = makeJob(
    serverName,
    { url, auth: "oauth", oauth },
    {
      paths: svcPaths(home),
      logger: silentLogger(),
      print: (line) => printed.push(line),
      openBrowser: async (u) => {
        opened.push(u);
        await followAuthorization(u);
      },
    },
  );
  return { job: { ...job, ...extra }, printed, opened };
}

export function testSystem(): GatewaySystem {
  return startSystem({ logger: silentLogger() });
}

/** Runs one login under a fresh root system, as the CLI does. */
export async function loginWith(
  h: JobHarness,
  flow: "browser" | "device" = "browser",
): Promise<StoredTokens> {
  const system = testSystem();
  try {
    return await runLogin(h.job, { flow, system, isTTY: true });
  } finally {
    system.shutdown();
  }
}

/** oidc-provider and a bearer-protected MCP server whose tokens must carry its URL as audience. */
export async function startOidcWithMcp(
  options: Parameters<typeof startOidc>[1] = {},
): Promise<{ oidc: OidcServer; mcp: ProtectedMcp; close(): Promise<void> }> {
  let mcpUrl = "";
  const oidc = await startOidc(() => mcpUrl, options);
  const mcp = await startProtectedMcp(
    () => oidc.issuer,
    async (token, resource) => (await oidc.audienceOf(token)) === resource,
  );
  mcpUrl = mcp.url;
  return {
    oidc,
    mcp,
    async close() {
      await mcp.close();
      await oidc.close();
    },
  };
}

/**
 * Runs a device login on a simulated clock: waits for the printed code, approves it on the
 * verification page, lets one poll interval pass and returns the machine's output.
 * `onPage: false` skips the page, for an authorization server that approves the code at the first poll
 * (the fake one does).
 */
export async function approveDeviceLogin(
  h: JobHarness,
  { onPage = true }: { readonly onPage?: boolean } = {},
): Promise<{ ok: boolean }> {
  const clock = new SimulatedClock();
  const actor = createActor(deviceLoginLogic, {
    input: { serverName: h.job.serverName, job: h.job, timeoutMs: 300_000 },
    clock,
  }).start();
  const waiting = await waitFor(actor, (s) => s.status !== "active" || s.matches({ authorizing: "waiting" }));
  if (waiting.status !== "active") return { ok: false };
  if (onPage) {
    const complete = /Or open this link directly: (\S+)/.exec(h.printed.join("\n"))?.[1] as string;
    const page = await followAuthorization(complete, 20, true);
    if (page.status !== 200) throw new Error(`verification page answered ${page.status}`);
  }
  clock.increment(waiting.context.intervalMs);
  await waitFor(actor, (s) => s.status === "done");
  return { ok: actor.getSnapshot().output?.ok === true };
}

/**
 * Fake authorization servers and protected resources for the tests of one file: each one started is
 * closed after its test, as is anything handed to `closeLater` (in reverse order of starting).
 */
export function oauthFakesPerTest() {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (closers.length) await closers.pop()?.();
  });
  return {
    closeLater(close: () => Promise<void>): void {
      closers.push(close);
    },
    async as(options: Parameters<typeof startFakeAs>[0] = {}): Promise<FakeAs> {
      const server = await startFakeAs(options);
      closers.push(server.close);
      return server;
    },
    async resource(...args: Parameters<typeof startFakeResource>): Promise<FakeResource> {
      const resource = await startFakeResource(...args);
      closers.push(resource.close);
      return resource;
    },
  };
}

/** A real OIDC provider and a protected MCP server shared by the tests of one file (started once, stopped after them). */
export function oidcWithMcpPerFile(): { readonly mcp: ProtectedMcp } {
  let started: Awaited<ReturnType<typeof startOidcWithMcp>> | undefined;
  beforeAll(async () => {
    started = await startOidcWithMcp();
  });
  afterAll(() => started?.close());
  return {
    get mcp(): ProtectedMcp {
      if (started === undefined) throw new Error("oidcWithMcpPerFile: used outside a test");
      return started.mcp;
    },
  };
}

/** A real MCP server behind the fake authorization server, logged in, and a gateway's hub connected to it. */
export async function connectedOAuthGateway(
  home: TempHome,
  { as, closeLater }: ReturnType<typeof oauthFakesPerTest>,
) {
  const settings: { refreshError?: { status: number; body: string; contentType?: string } } = {};
  const auth = await as(settings);
  const mcp = await startProtectedMcp(
    () => auth.url,
    async (token) => auth.issued.includes(token) && auth.active(token),
  );
  closeLater(mcp.close);
  const oauth = { cimd: false };
  const h = harness(home.dir, "notes", mcp.url, oauth);
  await loginWith(h);
  const log = captureLogger();
  const hub = new McpHub({
    servers: { notes: mcpServerSchema.parse({ url: mcp.url, auth: "oauth", oauth }) },
    cacheDir: `${home.dir}/mcp-cache`,
    scope: () => ({ secrets: {}, env: {} }),
    logger: log.logger,
    approvals: policyApprovals("deny", log.logger),
    clock: new SimulatedClock(),
    oauthProviderFor: (server, e, { interactive }) =>
      oauthProviderFor(server, e, { interactive, paths: svcPaths(home.dir), logger: log.logger }),
  });
  closeLater(() => hub.stop());
  hub.start();
  expect((await hub.settled("notes")).state).toBe("connected");
  const saved = h.job.store.readTokens();
  if (saved === undefined) throw new Error("no saved login");
  return {
    auth,
    mcp,
    hub,
    log,
    harness: h,
    settings,
    saved,
    store: h.job.store,
    refreshes: () => auth.seen.filter((r) => r.body.get("grant_type") === "refresh_token").length,
    logins: () => auth.seen.filter((r) => r.body.get("grant_type") === "authorization_code").length,
    warned: () =>
      log
        .lines()
        .map((line) => JSON.parse(line) as { level: number; msg: string; err?: string })
        .filter((l) => l.level >= 40),
  };
}
