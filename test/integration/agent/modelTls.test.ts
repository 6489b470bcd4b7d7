import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import type { Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { startTlsChatModel } from "../../fakes/tlsChatModel.js";
import { type Certs, makeCerts } from "../../fixtures/mcp/certs.js";
import { type RunningCli, startCliGateway } from "../../helpers/cliGateway.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";
import { svc } from "../cli/svc.js";

/**
 * An `https://` model endpoint whose certificate a CA of the system trust store issued (a company CA
 * installed with update-ca-certificates, or named by SSL_CERT_FILE): trusted, as MCP servers and Redis
 * trust it (docs/agent.md, base_url). The real CLI process: the trust store is read once per process, so
 * the tests with the same SSL_CERT_FILE share one (trustedGatewayWith).
 */

let dir: string;
let certs: Certs;
let model: Server;
/**
 * The same endpoint with a certificate for another host only (DNS:other.example), one requiring mTLS, and one
 * requiring it under TLS 1.2.
 */
let otherHost: Server;
let mtls: Server;
let mtls12: Server;
let telegram: FakeApi;
const homes: TempHome[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-model-tls-"));
  [certs, telegram] = await Promise.all([makeCerts(dir), startFakeTelegram()]);
  // A Chat Completions endpoint over TLS, with a certificate the test CA issued for 127.0.0.1.
  model = await startTlsChatModel(certs, "answered over TLS");
  otherHost = await startTlsChatModel(certs, "answered for other.example", { otherHost: true });
  mtls = await startTlsChatModel(certs, "answered over mTLS", { clientCert: true });
  mtls12 = await startTlsChatModel(certs, "answered over mTLS 1.2", {
    clientCert: true,
    maxVersion: "TLSv1.2",
  });
});

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const home of homes.splice(0)) home.cleanup();
});

afterAll(async () => {
  const closed = (server: Server | undefined) =>
    new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  await Promise.all([telegram?.close(), closed(model), closed(otherHost), closed(mtls), closed(mtls12)]);
  rmSync(dir, { recursive: true, force: true });
});

const portOf = (server: Server) => (server.address() as AddressInfo).port;

/** config.yaml of one route whose runs ask the TLS model at `baseUrl` (`retries` retries) and deliver to Telegram. */
function writeConfig(home: TempHome, retries: number, baseUrl: string): void {
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
          agent: { provider: "openai", model: "m", base_url: baseUrl, retries },
          platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram.url } },
        },
      ),
    ),
    0o600,
  );
}

/**
 * `svc gateway run` with one route whose runs ask the TLS model (`retries` retries; at `baseUrl`, by default
 * `model`'s) and deliver to Telegram.
 */
async function gatewayWith(
  env: Record<string, string>,
  retries: number,
  baseUrl = `https://127.0.0.1:${portOf(model)}/v1`,
) {
  const home = tempHome();
  homes.push(home);
  writeConfig(home, retries, baseUrl);
  telegram.requests.length = 0;
  const gateway = await startCliGateway(home, children, env);
  expect((await postJson(`http://127.0.0.1:${gateway.port}/webhooks/r`, {})).status).toBe(202);
  return { home, gateway };
}

/**
 * The gateway of the tests whose system trust store holds the test CA (SSL_CERT_FILE): one process for them
 * all, started by the first, each later test's agent settings (base_url, retries) applied by a reload (SIGHUP
 * re-reads agent.*) — a process each cost ~0.45 CPU-s. Stopped in afterAll.
 */
let trusted: { home: TempHome; gateway: RunningCli } | undefined;
const trustedChildren: ChildProcess[] = [];
afterAll(async () => {
  for (const child of trustedChildren.splice(0)) {
    if (child.exitCode !== null) continue;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  }
  trusted?.home.cleanup();
});

/**
 * As `gatewayWith` with SSL_CERT_FILE naming the test CA, on the shared gateway; `log()` is what its
 * gateway.log got from this run's request on.
 */
async function trustedGatewayWith(retries: number, baseUrl = `https://127.0.0.1:${portOf(model)}/v1`) {
  if (trusted === undefined) {
    const home = tempHome();
    writeConfig(home, retries, baseUrl);
    trusted = {
      home,
      gateway: await startCliGateway(home, trustedChildren, { SSL_CERT_FILE: certs.caCert }),
    };
  } else {
    const { gateway } = trusted;
    writeConfig(trusted.home, retries, baseUrl);
    const reloads = () => gateway.output().split("[webhook] Reloaded").length - 1;
    const before = reloads();
    gateway.child.kill("SIGHUP");
    await vi.waitFor(
      () => {
        if (reloads() === before) throw new Error(`not reloaded yet: ${gateway.output()}`);
      },
      { timeout: 10_000, interval: 20 },
    );
  }
  const { home, gateway } = trusted;
  const logFile = join(home.dir, "logs", "gateway.log");
  const from = statSync(logFile).size;
  telegram.requests.length = 0;
  expect((await postJson(`http://127.0.0.1:${gateway.port}/webhooks/r`, {})).status).toBe(202);
  return { log: () => readFileSync(logFile).subarray(from).toString("utf8") };
}

describe("agent.base_url over https://", { timeout: 60_000 }, () => {
  it("a certificate issued by a CA of the system trust store (SSL_CERT_FILE) is trusted: the run's reply is delivered", async () => {
    await trustedGatewayWith(0);
    expect(await telegramMessages(telegram, 1)).toEqual(["answered over TLS"]);
  });

  it("a certificate no trusted CA issued fails the run at once, not after retries, naming what to do", async () => {
    let handshakes = 0;
    const failed = () => handshakes++;
    model.on("tlsClientError", failed);
    try {
      // The system trust store holds another CA only: the server's is not trusted.
      const { home } = await gatewayWith({ SSL_CERT_FILE: join(dir, "other-ca.crt") }, 2);
      const [notice] = await telegramMessages(telegram, 1);
      expect(notice).toBe(
        `⚠️ Agent run failed: model endpoint https://127.0.0.1:${(model.address() as AddressInfo).port}/v1/chat/completions could not be reached: Cannot connect to API: unable to verify the first certificate — its TLS certificate is not issued by a CA this system trusts (a private or self-signed CA): add that CA to the system trust store (update-ca-certificates), or start svc with SSL_CERT_FILE or NODE_EXTRA_CA_CERTS set to its PEM file`,
      );
      // No retry can change a certificate: one handshake, no retry line.
      expect(handshakes).toBe(1);
      expect(readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")).not.toMatch(/model call failed/);
    } finally {
      model.off("tlsClientError", failed);
    }
  });

  it("an unreadable SSL_CERT_FILE is warned about at the start, and the certificate's error names it", async () => {
    const missing = join(dir, "no-such-bundle.pem");
    const { home, gateway } = await gatewayWith({ SSL_CERT_FILE: missing }, 0);
    const [notice] = await telegramMessages(telegram, 1);
    expect(notice).toBe(
      `⚠️ Agent run failed: model endpoint https://127.0.0.1:${portOf(model)}/v1/chat/completions could not be reached: Cannot connect to API: unable to verify the first certificate — its TLS certificate is not issued by a CA this system trusts (a private or self-signed CA), and SSL_CERT_FILE (${missing}) could not be read: ENOENT: no such file or directory — point SSL_CERT_FILE at a readable PEM file holding that CA`,
    );
    const warning = `WARN [gateway] SSL_CERT_FILE (${missing}) could not be read: ENOENT: no such file or directory — TLS connections (model endpoints, MCP servers, delivery targets, Redis) trust neither its CAs nor the distribution's bundle it stands in for, only Node.js's own list and NODE_EXTRA_CA_CERTS: point SSL_CERT_FILE at a readable PEM file, or unset it`;
    expect(gateway.output()).toContain(warning);
    expect(readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")).toContain(warning);
  });

  it("svc config check warns about an unreadable SSL_CERT_FILE too", async () => {
    const home = tempHome();
    homes.push(home);
    home.write("config.yaml", stringify({ agent: { provider: "openai", model: "m" } }), 0o600);
    const missing = join(dir, "no-such-bundle.pem");
    const result = await svc(home, ["config", "check"], { env: { SSL_CERT_FILE: missing } });
    expect(result.stderr).toContain(
      `Warning: SSL_CERT_FILE (${missing}) could not be read: ENOENT: no such file or directory — TLS connections`,
    );
    const fine = await svc(home, ["config", "check"], { env: { SSL_CERT_FILE: certs.caCert } });
    expect(fine.stderr).not.toContain("SSL_CERT_FILE");
  });

  it("a NODE_EXTRA_CA_CERTS without a PEM certificate is named the same way", async () => {
    const notPem = join(dir, "server.ext");
    const { gateway } = await gatewayWith({ NODE_EXTRA_CA_CERTS: notPem }, 0);
    const [notice] = await telegramMessages(telegram, 1);
    expect(notice).toMatch(
      new RegExp(
        `, and NODE_EXTRA_CA_CERTS \\(${notPem.replace(/[.]/g, "\\.")}\\) holds no PEM certificate \\(-----BEGIN CERTIFICATE-----\\) — point NODE_EXTRA_CA_CERTS at a readable PEM file holding that CA$`,
      ),
    );
    expect(gateway.output()).toContain(
      `WARN [gateway] NODE_EXTRA_CA_CERTS (${notPem}) holds no PEM certificate (-----BEGIN CERTIFICATE-----) — TLS connections (model endpoints, MCP servers, delivery targets, Redis) do not trust its CAs: point NODE_EXTRA_CA_CERTS at a readable PEM file, or unset it`,
    );
  });

  it("a certificate for a DNS name only, at an IP base_url: the error names what the certificate lists", async () => {
    await trustedGatewayWith(2, `https://127.0.0.1:${portOf(otherHost)}/v1`);
    const [notice] = await telegramMessages(telegram, 1);
    expect(notice).toMatch(
      / — its TLS certificate does not name the host of agent\.base_url: write the host name the certificate lists \(DNS:other\.example\) in agent\.base_url, or give the server a certificate for this host$/,
    );
  });

  it("an http:// base_url at the TLS port: the dropped connection says to write https://, and is retried", async () => {
    const { log } = await trustedGatewayWith(1, `http://127.0.0.1:${portOf(model)}/v1`);
    const [notice] = await telegramMessages(telegram, 1);
    expect(notice).toBe(
      `⚠️ Agent run failed: model endpoint http://127.0.0.1:${portOf(model)}/v1/chat/completions closed the connection without answering (other side closed) — the server, or a proxy in front of it, dropped the request: its log says why (a crash, a restart, a limit of its own); if it serves HTTPS on this port, write https:// in agent.base_url`,
    );
    // A server that crashed under the request closes it the same way: retried.
    expect(log()).toMatch(/retry 1 of 1/);
  });

  it("a server requiring a client certificate that drops the connection once the TLS 1.3 handshake is done (as a Node server does): read as any dropped connection, no client-certificate advice, and retried", async () => {
    const { log } = await trustedGatewayWith(1, `https://127.0.0.1:${portOf(mtls)}/v1`);
    const [notice] = await telegramMessages(telegram, 1);
    expect(notice).toBe(
      `⚠️ Agent run failed: model endpoint https://127.0.0.1:${portOf(mtls)}/v1/chat/completions closed the connection without answering (other side closed) — the server, or a proxy in front of it, dropped the request: its log says why (a crash, a restart, a limit of its own)`,
    );
    expect(log()).toMatch(/retry 1 of 1/);
  });

  it("a TLS 1.2 server requiring a client certificate refuses the handshake with 'handshake failure', which a server with no cipher in common sends too: both causes named, and not retried", async () => {
    const refused: string[] = [];
    const failed = (err: Error & { code?: string }) => refused.push(String(err.code));
    mtls12.on("tlsClientError", failed);
    try {
      const { log } = await trustedGatewayWith(2, `https://127.0.0.1:${portOf(mtls12)}/v1`);
      const [notice] = await telegramMessages(telegram, 1);
      expect(notice).toMatch(
        / could not be reached: Cannot connect to API: .*alert handshake failure.* — the server refused the TLS handshake: either it has no TLS version or cipher in common with svc, which speaks TLS 1\.2 and 1\.3 \(AES-GCM and ChaCha20 ciphers among others\): let the server offer those; or it requires a client certificate \(mTLS\), which svc cannot send to a model endpoint: let it take svc's requests without one, or put a proxy in front of it that presents one$/,
      );
      // A retry changes neither cause: one handshake, no retry line.
      expect(refused).toEqual(["ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE"]);
      expect(log()).not.toMatch(/model call failed/);
    } finally {
      mtls12.off("tlsClientError", failed);
    }
  });
});
