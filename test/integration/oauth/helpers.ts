import { afterAll, afterEach, beforeAll } from "vitest";
import { createActor, SimulatedClock, waitFor } from "xstate";
import { makeJob, type OAuthJob } from "../../../src/actors/oauth/context.js";
import { deviceLoginLogic } from "../../../src/actors/oauth/deviceLogin.js";
import { runLogin } from "../../../src/actors/oauth/runLogin.js";
import { type GatewaySystem, startSystem } from "../../../src/actors/system.js";
import { svcPaths } from "../../../src/config/paths.js";
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
