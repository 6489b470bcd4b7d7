import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandOptions, connectRedis } from "../../../src/io/state/redis/connection.js";
import { type Certs, makeCerts } from "../../fixtures/mcp/certs.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";

let dir: string;
let certs: Certs;
let redis: TestRedis;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-redis-tls-"));
  certs = await makeCerts(dir);
  redis = await startTestRedis({ tls: { cert: certs.serverCert, key: certs.serverKey } });
});

afterAll(async () => {
  await redis.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `body` with SSL_CERT_FILE set (the system trust store OpenSSL, curl and Python read). */
async function withCertFile<T>(file: string, body: () => Promise<T>): Promise<T> {
  const saved = process.env.SSL_CERT_FILE;
  process.env.SSL_CERT_FILE = file;
  try {
    return await body();
  } finally {
    if (saved === undefined) delete process.env.SSL_CERT_FILE;
    else process.env.SSL_CERT_FILE = saved;
  }
}

describe("state.redis_url with rediss:// (TLS)", () => {
  it("verifies the server against the system's CAs: a private CA in the system trust store is trusted", async () => {
    const url = redis.tlsUrl as string;
    const connected = await withCertFile(certs.caCert, () =>
      connectRedis(url, "config.yaml", commandOptions(), "svc-tls:"),
    );
    try {
      expect(await connected.ping()).toBe("PONG");
    } finally {
      connected.disconnect();
    }
  });

  it("refuses a server whose CA the system does not trust, saying so", async () => {
    const url = redis.tlsUrl as string;
    await expect(
      withCertFile(join(dir, "none.pem"), () =>
        connectRedis(url, "config.yaml", commandOptions(), "svc-tls:"),
      ),
    ).rejects.toThrow(/not issued by a CA this system trusts/);
  });
});
