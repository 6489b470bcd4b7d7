import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { FakeApi } from "../../fakes/httpFake.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { startTlsChatModel } from "../../fakes/tlsChatModel.js";
import { type Certs, makeCerts } from "../../fixtures/mcp/certs.js";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { telegramMessages } from "../../helpers/telegramMessages.js";

/**
 * An `https://` model endpoint whose certificate a CA of the system trust store issued (a company CA
 * installed with update-ca-certificates, or named by SSL_CERT_FILE): trusted, as MCP servers and Redis
 * trust it (docs/agent.md, base_url). The real CLI process: the trust store is read once per process.
 */

let dir: string;
let certs: Certs;
let model: Server;
let telegram: FakeApi;
const homes: TempHome[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-model-tls-"));
  [certs, telegram] = await Promise.all([makeCerts(dir), startFakeTelegram()]);
  // A Chat Completions endpoint over TLS, with a certificate the test CA issued for 127.0.0.1.
  model = await startTlsChatModel(certs, "answered over TLS");
});

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const home of homes.splice(0)) home.cleanup();
});

afterAll(async () => {
  await Promise.all([
    telegram?.close(),
    new Promise<void>((resolve) => (model === undefined ? resolve() : model.close(() => resolve()))),
  ]);
  rmSync(dir, { recursive: true, force: true });
});

/** `svc gateway run` with one route whose runs ask the TLS model (`retries` retries) and deliver to Telegram. */
async function gatewayWith(env: Record<string, string>, retries: number) {
  const home = tempHome();
  homes.push(home);
  const { port } = model.address() as AddressInfo;
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
          agent: { provider: "openai", model: "m", base_url: `https://127.0.0.1:${port}/v1`, retries },
          platforms: { telegram: { enabled: true, token: "1:tg", base_url: telegram.url } },
        },
      ),
    ),
    0o600,
  );
  telegram.requests.length = 0;
  const gateway = await startCliGateway(home, children, env);
  expect((await postJson(`http://127.0.0.1:${gateway.port}/webhooks/r`, {})).status).toBe(202);
  return { home, gateway };
}

describe("agent.base_url over https://", { timeout: 60_000 }, () => {
  it("a certificate issued by a CA of the system trust store (SSL_CERT_FILE) is trusted: the run's reply is delivered", async () => {
    await gatewayWith({ SSL_CERT_FILE: certs.caCert }, 0);
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
});
