import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { makeJob } from "../../../src/actors/oauth/context.js";
import { usableTokens } from "../../../src/actors/oauth/refresh.js";
import { svcPaths } from "../../../src/config/paths.js";
import { silentLogger } from "../../../src/io/log.js";
import type { DeliveryError } from "../../../src/io/targets/target.js";
import { startFakeAs, startFakeResource } from "../../fakes/authServer/fakeAs.js";
import { sentContents, startFakeDiscord } from "../../fakes/discord.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { startTlsChatModel } from "../../fakes/tlsChatModel.js";
import { type Certs, makeCerts } from "../../fixtures/mcp/certs.js";
import { type FixtureHttp, startStreamableHttp } from "../../fixtures/mcp/httpServers.js";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { type ForwardProxy, startForwardProxy } from "../../helpers/forwardProxy.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { runInProcess } from "../../helpers/inProcessCli.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";
import { entry, makeHub, text } from "../mcp/harness.js";
import { harness, loginWith } from "../oauth/helpers.js";
import { message, registryFor, sendError } from "../targets/support.js";

/**
 * Outbound requests through HTTPS_PROXY / HTTP_PROXY (docs/operations.md, "Outbound proxy"): a real
 * forwarding and CONNECT proxy on loopback reaches the fakes under names that only it can connect
 * (`model.test`, `mcp.test`), so a request that skipped the proxy could not succeed.
 */

/** A user and password with characters a URL must percent-encode. */
const AUTH = "svc-user:pa@ss w0rd";
const PASSWORD = "pa@ss w0rd";
const BASIC = `Basic ${Buffer.from(AUTH).toString("base64")}`;

const VARIABLES = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];
const saved = Object.fromEntries(
  [...VARIABLES, "NO_PROXY", "no_proxy"].map((name) => [name, process.env[name]]),
);

let dir: string;
let certs: Certs;
let model: Server;
let telegram: FakeApi;
const proxies: ForwardProxy[] = [];
const homes: TempHome[] = [];
const children: ChildProcess[] = [];
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-proxy-"));
  [certs, telegram] = await Promise.all([makeCerts(dir), startFakeTelegram()]);
  // A Chat Completions endpoint over TLS, its certificate issued by the test CA for model.test.
  model = await startTlsChatModel(certs, "through the proxy");
});

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const home of homes.splice(0)) home.cleanup();
  await Promise.all([...proxies.splice(0).map((p) => p.close()), ...closers.splice(0).map((c) => c())]);
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

afterAll(async () => {
  await Promise.all([
    telegram?.close(),
    new Promise<void>((resolve) => (model === undefined ? resolve() : model.close(() => resolve()))),
  ]);
  rmSync(dir, { recursive: true, force: true });
});

async function proxyTo(routes: Record<string, string>, auth: string | undefined = AUTH) {
  const proxy = await startForwardProxy(routes, auth);
  proxies.push(proxy);
  return proxy;
}

/** Only the variables of `env` set, in this process (the in-process tests). */
function useEnv(env: Record<string, string>) {
  for (const name of [...VARIABLES, "NO_PROXY", "no_proxy"]) delete process.env[name];
  Object.assign(process.env, env);
}

const portOf = (server: { address(): AddressInfo | string | null }) => (server.address() as AddressInfo).port;

/** `svc gateway run` with one route whose runs ask the model at https://model.test and deliver to `telegramUrl`. */
async function gatewayWith(env: Record<string, string>, telegramUrl: string, retries = 0) {
  const home = tempHome();
  homes.push(home);
  home.write(
    "config.yaml",
    stringify(
      webhookConfig(
        {
          r: {
            secret: "INSECURE_NO_AUTH",
            prompt: "hello",
            toolsets: ["no_mcp"],
            deliver: "telegram",
            deliver_extra: { chat_id: "-5" },
          },
        },
        { port: 0 },
        {
          agent: { provider: "openai", model: "m", base_url: "https://model.test/v1", retries },
          platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegramUrl } },
        },
      ),
    ),
    0o600,
  );
  telegram.requests.length = 0;
  const gateway = await startCliGateway(home, children, { SSL_CERT_FILE: certs.caCert, ...env });
  expect((await postJson(`http://127.0.0.1:${gateway.port}/webhooks/r`, {})).status).toBe(202);
  return { home, gateway };
}

describe("outbound proxy: the gateway", { timeout: 60_000 }, () => {
  it("a model request tunnels (CONNECT) through HTTPS_PROXY with its credentials, the TLS trust of the origin kept; a Telegram delivery is forwarded through http_proxy; the start log names the proxies without credentials", async () => {
    const proxy = await proxyTo({
      "model.test:443": `127.0.0.1:${portOf(model)}`,
      "telegram.test:80": `127.0.0.1:${new URL(telegram.url).port}`,
    });
    const { home, gateway } = await gatewayWith(
      { HTTPS_PROXY: proxy.url, http_proxy: proxy.url },
      "http://telegram.test",
    );
    expect(await telegramMessages(telegram, 1)).toEqual(["through the proxy"]);
    expect(proxy.tunnels).toEqual(["model.test:443"]);
    // The bot's getMe at start, then the reply.
    expect(proxy.forwarded).toContain("http://telegram.test/bot1:tg/sendMessage");
    expect(proxy.forwarded.every((url) => url.startsWith("http://telegram.test/bot1:tg/"))).toBe(true);
    expect(new Set(proxy.authorizations)).toEqual(new Set([BASIC]));
    const shown = `http://127.0.0.1:${new URL(proxy.url).port}`;
    const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    const notice = `outbound requests use a proxy: https URLs through ${shown} (HTTPS_PROXY), http URLs through ${shown} (http_proxy); loopback hosts go direct`;
    expect(log.split("\n").filter((line) => line.includes(notice))).toHaveLength(1);
    for (const text of [log, gateway.output()]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(encodeURIComponent(PASSWORD));
    }
  });

  it("a proxy refusing the credentials (407) fails the run at once, not after retries, naming the proxy and the variable, never the password; a loopback target (the failure's notice to Telegram) goes direct", async () => {
    const proxy = await proxyTo({ "model.test:443": `127.0.0.1:${portOf(model)}` });
    const wrong = proxy.url.replace(encodeURIComponent(PASSWORD), "wrong");
    const { home, gateway } = await gatewayWith({ HTTPS_PROXY: wrong, HTTP_PROXY: wrong }, telegram.url, 2);
    const shown = `http://127.0.0.1:${new URL(proxy.url).port}`;
    const [notice] = await telegramMessages(telegram, 1);
    expect(notice).toBe(
      `⚠️ Agent run failed: model endpoint https://model.test/v1/chat/completions could not be reached: Cannot connect to API: the proxy ${shown} (set by HTTPS_PROXY) refused the request: HTTP 407 Proxy Authentication Required — check the user and password in HTTPS_PROXY`,
    );
    // No retry can change the proxy's answer: one tunnel asked for, no retry line.
    expect(proxy.tunnels).toEqual(["model.test:443"]);
    const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    expect(log).not.toMatch(/model call failed/);
    for (const text of [log, gateway.output(), notice]) expect(text).not.toContain("wrong@");
  });
});

describe("outbound proxy: in process", () => {
  let mcp: FixtureHttp | undefined;
  afterEach(async () => {
    await mcp?.close();
    mcp = undefined;
  });

  it("an MCP Streamable HTTP server is reached through the CONNECT tunnel with its ssl_verify CA bundle and client certificate", async () => {
    const key = certs.read(certs.serverKey);
    const cert = certs.read(certs.serverCert);
    mcp = await startStreamableHttp({ tls: { key, cert, ca: certs.read(certs.caCert) } });
    const url = new URL(mcp.url);
    const proxy = await proxyTo({ "mcp.test:443": `127.0.0.1:${url.port}` });
    useEnv({ HTTPS_PROXY: proxy.url });
    const home = tempHome();
    homes.push(home);
    const hub = makeHub(home, {
      s: entry({
        url: `https://mcp.test${url.pathname}`,
        ssl_verify: certs.caCert,
        client_cert: [certs.clientCert, certs.clientKey],
      }),
    });
    closers.push(() => hub.stop());
    expect((await hub.settled("s")).state).toBe("connected");
    expect(text(await hub.call("s", "echo", { text: "tunnelled" }))).toBe("tunnelled");
    expect(proxy.tunnels.length).toBeGreaterThan(0);
    expect(new Set(proxy.tunnels)).toEqual(new Set(["mcp.test:443"]));
    expect(new Set(proxy.authorizations)).toEqual(new Set([BASIC]));
  });

  it("an OAuth token refresh goes to the token endpoint through HTTP_PROXY", async () => {
    const home = tempHome();
    homes.push(home);
    const as = await startFakeAs({ metadata: () => ({ token_endpoint: "http://auth.test/token" }) });
    closers.push(as.close);
    const rs = await startFakeResource([as.url]);
    closers.push(rs.close);
    const proxy = await proxyTo({ "auth.test:80": `127.0.0.1:${new URL(as.url).port}` }, undefined);
    useEnv({ HTTP_PROXY: proxy.url });
    await loginWith(harness(home.dir, "srv", rs.url, { cimd: false }));
    const later = Date.now() + 2 * 3600_000;
    const job = makeJob(
      "srv",
      { url: rs.url, auth: "oauth", oauth: { cimd: false } },
      { paths: svcPaths(home.dir), logger: silentLogger(), now: () => later },
    );
    expect((await usableTokens(job)).access_token).toBe(as.issued[1]);
    const refreshes = as.seen.filter(
      (r) => r.path === "/token" && r.body.get("grant_type") === "refresh_token",
    );
    expect(refreshes).toHaveLength(1);
    // The code exchange at login and the refresh: both through the proxy.
    expect(proxy.forwarded).toEqual(["http://auth.test/token", "http://auth.test/token"]);
  });

  it("a Discord delivery through HTTPS_PROXY that the proxy does not allow (403 to CONNECT) fails naming the proxy; NO_PROXY sends it direct", async () => {
    const discord = await startFakeDiscord("D");
    closers.push(() => discord.close());
    const proxy = await proxyTo({}, undefined);
    const shown = `http://127.0.0.1:${new URL(proxy.url).port}`;
    const registry = registryFor({
      discord: { enabled: true, token: "D", base_url: "https://discord.invalid" },
    });
    useEnv({ HTTPS_PROXY: proxy.url });
    const refused = await sendError(registry, "discord", message("hi", { chat_id: "1" }));
    expect(String((refused as Error).message)).toBe(
      `discord: create message: connection failed (the proxy ${shown} (set by HTTPS_PROXY) refused to connect to discord.invalid: HTTP 403 Forbidden — the proxy may not allow this host; add the host to NO_PROXY if it is reachable without the proxy)`,
    );
    expect(proxy.tunnels).toEqual(["discord.invalid:443"]);
    // Not retried: the proxy would refuse it again.
    expect((refused as DeliveryError).transient).toBe(false);
    useEnv({ HTTPS_PROXY: proxy.url, NO_PROXY: "localhost,.invalid" });
    const direct = await sendError(registry, "discord", message("hi", { chat_id: "1" }));
    // Resolved by svc itself, not the proxy: the name does not exist.
    expect(String((direct as Error).message)).toBe(
      "discord: create message: connection failed (ENOTFOUND) — the host name discord.invalid is not known (DNS): check the host in platforms.discord.base_url",
    );
    expect(proxy.tunnels).toHaveLength(1);
    // A loopback base_url is never proxied.
    const local = registryFor({ discord: { enabled: true, token: "D", base_url: discord.url } });
    useEnv({ HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url });
    await local.get("discord")?.send(message("direct", { chat_id: "1" }));
    expect(sentContents(discord)).toEqual(["direct"]);
    expect(proxy.forwarded).toEqual([]);
  });

  it("an MCP server at an IPv4-mapped loopback literal (http://[::ffff:127.0.0.1]:<port>) is reached directly, never through HTTP_PROXY", async () => {
    mcp = await startStreamableHttp();
    const url = new URL(mcp.url);
    const proxy = await proxyTo({}, undefined);
    useEnv({ HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url });
    const home = tempHome();
    homes.push(home);
    const hub = makeHub(home, { s: entry({ url: `http://[::ffff:127.0.0.1]:${url.port}${url.pathname}` }) });
    closers.push(() => hub.stop());
    expect((await hub.settled("s")).state).toBe("connected");
    expect(text(await hub.call("s", "echo", { text: "direct" }))).toBe("direct");
    expect(proxy.forwarded).toEqual([]);
    expect(proxy.tunnels).toEqual([]);
  });

  it("an MCP server behind a proxy that cannot be reached fails naming the proxy once, not undici's connect error after it", async () => {
    useEnv({ HTTPS_PROXY: "http://user:secret@127.0.0.1:1" });
    const home = tempHome();
    homes.push(home);
    const hub = makeHub(home, { s: entry({ url: "https://mcp.test/mcp", connect_timeout: 5 }) });
    closers.push(() => hub.stop());
    const status = await hub.settled("s");
    expect(status.state).toBe("failed");
    expect(status.lastError).toBe(
      "mcp_servers.s: fetch failed: the proxy http://127.0.0.1:1 (set by HTTPS_PROXY) could not be reached: ECONNREFUSED — check HTTPS_PROXY",
    );
  });

  it("an https:// proxy is verified against the system's CAs (SSL_CERT_FILE), as model endpoints are", async () => {
    const proxy = await startForwardProxy(
      { "telegram.test:80": `127.0.0.1:${new URL(telegram.url).port}` },
      undefined,
      { key: certs.read(certs.serverKey), cert: certs.read(certs.serverCert) },
    );
    proxies.push(proxy);
    const registry = registryFor({
      telegram: { enabled: true, token: "1:tg", base_url: "http://telegram.test", home_channel: "42" },
    });
    const saved = process.env.SSL_CERT_FILE;
    try {
      useEnv({ HTTP_PROXY: proxy.url });
      process.env.SSL_CERT_FILE = certs.caCert;
      telegram.requests.length = 0;
      await registry.get("telegram")?.send(message("over tls to the proxy"));
      expect(telegram.requests.map((r) => r.path)).toEqual(["/bot1:tg/sendMessage"]);
      // A CONNECT tunnel: an https:// proxy forwards nothing in the clear.
      expect(proxy.tunnels).toEqual(["telegram.test:80"]);
    } finally {
      if (saved === undefined) delete process.env.SSL_CERT_FILE;
      else process.env.SSL_CERT_FILE = saved;
    }
  });

  it("a proxy that cannot be reached is named with its variable", async () => {
    useEnv({ https_proxy: "http://user:secret@127.0.0.1:1" });
    const registry = registryFor({
      discord: { enabled: true, token: "D", base_url: "https://discord.invalid" },
    });
    const error = await sendError(registry, "discord", message("hi", { chat_id: "1" }));
    expect(String((error as Error).message)).toBe(
      "discord: create message: connection failed (the proxy http://127.0.0.1:1 (set by https_proxy) could not be reached: ECONNREFUSED — check https_proxy)",
    );
    // Retried: the proxy may come back.
    expect((error as DeliveryError).transient).toBe(true);
  });
});

describe("outbound proxy: svc config check", () => {
  it("says which proxy outbound requests use, without credentials; a proxy scheme svc cannot use is a warning", async () => {
    const home = tempHome();
    homes.push(home);
    const env = { HOME: home.dir, SVC_HOME: home.dir, PATH: process.env.PATH ?? "" };
    const used = await runInProcess(["config", "check"], {
      ...env,
      HTTPS_PROXY: "http://svc-user:hunter2@proxy.corp.example:3128",
      NO_PROXY: ".corp.example,10.0.0.0/8",
    });
    expect(used.code).toBe(0);
    expect(used.stdout.split("\n")[0]).toBe(
      "outbound requests use a proxy: https URLs through http://proxy.corp.example:3128 (HTTPS_PROXY); loopback hosts and NO_PROXY=.corp.example,10.0.0.0/8 go direct",
    );
    expect(used.stdout).toMatch(/^ok: /m);
    expect(used.stdout + used.stderr).not.toContain("hunter2");
    const socks = await runInProcess(["config", "check"], { ...env, ALL_PROXY: "socks5://u:hunter2@p:1080" });
    expect(socks.stderr).toContain(
      "Warning: outbound proxy: ALL_PROXY: svc reaches a proxy over http:// or https:// only, not socks5:// (socks5://p:1080)",
    );
    expect(socks.stdout + socks.stderr).not.toContain("hunter2");
    const none = await runInProcess(["config", "check"], env);
    expect(none.stdout).not.toContain("proxy");
  });
});
