import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { connectFailure } from "../../../src/io/state/redis/connectFailure.js";
import {
  commandOptions,
  connectRedis,
  createRedisHealth,
  redisLabel,
} from "../../../src/io/state/redis/connection.js";
import { openRedisState } from "../../../src/state/redisState.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { type Certs, makeCerts } from "../../fixtures/mcp/certs.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { startRedisProxy } from "../../helpers/redisProxy.js";

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

  it("a server at its maxclients (it closes each new connection before the TLS handshake, saying nothing) is named so with that fix, neither as one to start nor as one that wants a client certificate", async () => {
    const own = await startTestRedis({
      tls: { cert: certs.serverCert, key: certs.serverKey },
      args: ["--maxclients", "1"],
    });
    const url = own.tlsUrl as string;
    const holder = await withCertFile(certs.caCert, () => connectRedis(url, "c", commandOptions()));
    try {
      // Its close races svc's first write: either a reset or a close before the handshake, said alike.
      for (let i = 0; i < 3; i += 1) {
        const refused = withCertFile(certs.caCert, () =>
          connectRedis(url, "/home/x/config.yaml", commandOptions(), "svc-tls:"),
        );
        await expect(refused).rejects.toThrow(
          /^\/home\/x\/config\.yaml: state\.redis_url: rediss:\/\/localhost:\d+\/0 closed the connection before the TLS handshake \(.+\), as a Redis does that has as many clients as its maxclients allows \(it says so only without TLS\) — close the clients that hold its connections \(CLIENT LIST shows them\) or raise maxclients in its redis\.conf \(CONFIG SET maxclients for the running server\); each gateway instance holds about 8$/,
        );
      }
    } finally {
      holder.disconnect();
      await own.cleanup();
    }
  });

  it("a server that asks for a client certificate (tls-auth-clients yes, Redis's default) is named so, not as one to start", async () => {
    const own = await startTestRedis({
      tls: { cert: certs.serverCert, key: certs.serverKey, clientCa: certs.caCert },
    });
    try {
      const refused = withCertFile(certs.caCert, () =>
        connectRedis(own.tlsUrl as string, "/home/x/config.yaml", commandOptions(), "svc-tls:"),
      );
      await expect(refused).rejects.toThrow(
        // Over TLS 1.3 the refusal comes after the handshake: on a loaded machine the socket's reset can
        // come before the server's alert is read, and the message then gives the client certificate as
        // the likely cause.
        /^\/home\/x\/config\.yaml: state\.redis_url: (rediss:\/\/localhost:\d+\/0 asks for a TLS client certificate \(tlsv13 alert certificate required\) — svc sends none to Redis: set tls-auth-clients optional in its redis\.conf \(yes, its default with TLS, refuses every client without one\) and authenticate svc with the password or ACL user in state\.redis_url|cannot reach rediss:\/\/localhost:\d+\/0 \(.*ECONNRESET\) — start Redis at .*; a Redis that requires a TLS client certificate \(tls-auth-clients yes, its default with TLS\) resets svc, which sends none: set tls-auth-clients optional in its redis\.conf)$/,
      );
    } finally {
      await own.cleanup();
    }
  });
});

describe("a rediss:// Redis that refuses the TLS handshake with 'handshake failure'", {
  timeout: 30_000,
}, () => {
  // OpenSSL's generic refusal (alert 40): a Redis whose tls-protocols/tls-ciphers/tls-ciphersuites svc's
  // client cannot meet sends it, under TLS 1.2 and 1.3, and so does a TLS 1.2 one that requires a client
  // certificate. The alert does not tell the two apart: the start names both, each with its fix.
  const BOTH_CAUSES =
    / refused the TLS handshake \(sslv3 alert handshake failure\) — either it has no TLS version or cipher in common with svc, which speaks TLS 1\.2 and 1\.3 \(AES-GCM and ChaCha20 ciphers among others\): let the server offer those \(tls-protocols, tls-ciphers and tls-ciphersuites in its redis\.conf\); or it requires a client certificate, which svc does not send to Redis: set tls-auth-clients optional in its redis\.conf \(yes, its default with TLS, refuses every client without one\) and authenticate svc with the password or ACL user in state\.redis_url$/;

  async function refusal(own: TestRedis): Promise<string> {
    const started = withCertFile(certs.caCert, () =>
      connectRedis(own.tlsUrl as string, "/home/x/config.yaml", commandOptions(), "svc-tls:"),
    );
    return started.then(
      (connected) => {
        connected.disconnect();
        throw new Error("the start connected");
      },
      (err: Error) => err.message,
    );
  }

  /** Each Redis: what the test names it, whether it requires a client certificate, its TLS settings. */
  const cases: ReadonlyArray<readonly [string, boolean, readonly string[]]> = [
    [
      "a TLS 1.2 Redis whose only cipher svc's client does not offer (tls-ciphers), asking no client certificate",
      false,
      ["--tls-protocols", "TLSv1.2", "--tls-ciphers", "ECDHE-ECDSA-CAMELLIA256-SHA384"],
    ],
    [
      "a TLS 1.3 Redis whose only cipher suite svc's client does not offer (tls-ciphersuites), asking no client certificate",
      false,
      ["--tls-protocols", "TLSv1.3", "--tls-ciphersuites", "TLS_AES_128_CCM_8_SHA256"],
    ],
    [
      "a TLS 1.2 Redis that requires a client certificate (tls-auth-clients yes)",
      true,
      ["--tls-protocols", "TLSv1.2"],
    ],
  ];
  for (const [name, clientCert, args] of cases)
    it(`${name}: both causes named, not a client certificate alone`, async () => {
      const own = await startTestRedis({
        tls: {
          cert: certs.serverCert,
          key: certs.serverKey,
          ...(clientCert ? { clientCa: certs.caCert } : {}),
        },
        args,
      });
      try {
        const message = await refusal(own);
        expect(message).toMatch(/^\/home\/x\/config\.yaml: state\.redis_url: rediss:\/\/localhost:\d+\/0 /);
        expect(message).toMatch(BOTH_CAUSES);
      } finally {
        await own.cleanup();
      }
    });
});

describe("a rediss:// Redis that asks for a password", { timeout: 30_000 }, () => {
  it("refuses the start with a fix whose example URL keeps the rediss:// scheme (NOAUTH and WRONGPASS)", async () => {
    const own = await startTestRedis({ tls: { cert: certs.serverCert, key: certs.serverKey } });
    // Set once it runs: the helper's start waits for a PONG, which a Redis asking for a password refuses.
    const admin = new Redis(own.url);
    await admin.config("SET", "requirepass", "right");
    admin.disconnect();
    const url = own.tlsUrl as string;
    const start = (given: string) =>
      withCertFile(certs.caCert, () =>
        connectRedis(given, "/home/x/config.yaml", commandOptions(), "svc-tls:"),
      );
    try {
      await expect(start(url)).rejects.toThrow(
        /asks for a password, and state\.redis_url gives none \(NOAUTH .*\) — write it in state\.redis_url \(rediss:\/\/:password@host:6379\/0, or rediss:\/\/user:password@… for an ACL user; keep it in \.env\)$/,
      );
      await expect(start(url.replace("rediss://", "rediss://:wrong@"))).rejects.toThrow(
        /refused the credentials \(WRONGPASS .*\) — fix the user and password in state\.redis_url \(rediss:\/\/user:password@host:6379\/0; keep them in \.env\)$/,
      );
    } finally {
      await own.cleanup();
    }
  });
});

describe("a rediss:// Redis that starts requiring a client certificate while the gateway runs", {
  timeout: 30_000,
}, () => {
  it("is named with that fix once in the outage, as the start names it, not only as unreachable (connection closed); and served again once it takes svc", async () => {
    const own = await startTestRedis({
      tls: { cert: certs.serverCert, key: certs.serverKey },
      args: ["--tls-ca-cert-file", certs.caCert],
    });
    const admin = new Redis(own.url);
    const log = captureLogger();
    const saved = process.env.SSL_CERT_FILE;
    process.env.SSL_CERT_FILE = certs.caCert;
    const state = await openRedisState({
      settings: { backend: "redis", redis_url: own.tlsUrl, redis_key_prefix: "tls-cert" } as never,
      configFile: "config.yaml",
      logger: log.logger,
      maxConcurrentRuns: 1,
      rateLimit: 1000,
      elapsed: () => 0,
      lookup: () => undefined,
      async execute() {},
    });
    try {
      const said = (text: string) => log.messages().filter((m) => m.includes(text));
      // As a restart with tls-auth-clients yes (Redis's default with TLS) does: svc's connection is closed,
      // and each reconnect, which sends no client certificate, is refused.
      await admin.config("SET", "tls-auth-clients", "yes");
      await admin.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes");
      await vi.waitFor(() => expect(said("cannot be reconnected to")).toHaveLength(1), {
        timeout: 10_000,
        interval: 50,
      });
      expect(said("is unreachable")).toHaveLength(1);
      // The server's alert, or the reset that came before it (TLS 1.3 refuses the certificate after the handshake).
      expect(said("cannot be reconnected to")[0]).toMatch(
        /^\[state\] Redis at rediss:\/\/localhost:\d+\/0 cannot be reconnected to: (rediss:\/\/localhost:\d+\/0 asks for a TLS client certificate \(tlsv13 alert certificate required\) — svc sends none to Redis: set tls-auth-clients optional in its redis\.conf|cannot reach rediss:\/\/localhost:\d+\/0 \(.*ECONNRESET\) — start Redis at .*; a Redis that requires a TLS client certificate \(tls-auth-clients yes, its default with TLS\) resets svc, which sends none: set tls-auth-clients optional in its redis\.conf)/,
      );
      // Every reconnect is refused alike: said once in the outage.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(said("cannot be reconnected to")).toHaveLength(1);
      await admin.config("SET", "tls-auth-clients", "optional");
      await vi.waitFor(() => expect(said("is reachable again")).toHaveLength(1), {
        timeout: 10_000,
        interval: 50,
      });
    } finally {
      if (saved === undefined) delete process.env.SSL_CERT_FILE;
      else process.env.SSL_CERT_FILE = saved;
      await state.stop(0);
      await state.disconnect();
      admin.disconnect();
      await own.cleanup();
    }
  });
});

describe("a rediss:// reconnect closed before its TLS handshake, then refused for want of a client certificate", {
  timeout: 30_000,
}, () => {
  it("names the client certificate once the later reconnects are refused: the first failure, which says nothing more than a Redis to start, does not settle the outage", async () => {
    const own = await startTestRedis({
      tls: { cert: certs.serverCert, key: certs.serverKey },
      args: ["--tls-ca-cert-file", certs.caCert],
    });
    // A proxy in front of its TLS port, as a Redis stopping (or a CLIENT KILL during a handshake) does: once
    // told, it closes the next connection as soon as its client's hello is in, before any handshake.
    let cutNext = false;
    const proxy = await startRedisProxy(Number(new URL(own.tlsUrl as string).port), (client, upstream) => {
      if (cutNext) {
        cutNext = false;
        client.once("data", () => client.end());
        return;
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    const url = `rediss://localhost:${new URL(proxy.url).port}/0`;
    const admin = new Redis(own.url);
    const log = captureLogger();
    const redis = await withCertFile(certs.caCert, () => connectRedis(url, "config.yaml", commandOptions()));
    /** The reconnect failures svc probed, in order. */
    const probed: string[] = [];
    const label = redisLabel(url);
    const health = createRedisHealth(
      label,
      log.logger,
      undefined,
      undefined,
      undefined,
      "requests",
      (reason) => {
        probed.push(reason);
        return connectFailure(url, label, redis.options, reason);
      },
    );
    health.watch("commands", redis);
    try {
      const said = (text: string) => log.messages().filter((m) => m.includes(text));
      await admin.config("SET", "tls-auth-clients", "yes");
      cutNext = true;
      await admin.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes");
      await vi.waitFor(() => expect(said("cannot be reconnected to")).toHaveLength(1), {
        timeout: 10_000,
        interval: 50,
      });
      // The first reconnect was closed before its handshake, and its probe (a handshake that ends) found
      // nothing more than a Redis to start; the next one's refusal was probed in its turn.
      expect(probed[0]).toMatch(/before secure TLS connection was established/);
      expect(probed.length).toBeGreaterThanOrEqual(2);
      expect(said("is unreachable")).toHaveLength(1);
      expect(said("cannot be reconnected to")[0]).toMatch(
        /^\[state\] Redis at rediss:\/\/localhost:\d+\/0 cannot be reconnected to: (rediss:\/\/localhost:\d+\/0 asks for a TLS client certificate \(tlsv13 alert certificate required\) — svc sends none to Redis: set tls-auth-clients optional in its redis\.conf|cannot reach rediss:\/\/localhost:\d+\/0 \(.*ECONNRESET\) — start Redis at .*; a Redis that requires a TLS client certificate \(tls-auth-clients yes, its default with TLS\) resets svc, which sends none: set tls-auth-clients optional in its redis\.conf)/,
      );
    } finally {
      health.closing(redis);
      redis.disconnect();
      admin.disconnect();
      await proxy.close();
      await own.cleanup();
    }
  });
});
