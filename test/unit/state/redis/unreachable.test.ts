import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { createRedisHealth } from "../../../../src/io/state/redis/connection.js";
import { redisCommandFailure, unreachable } from "../../../../src/io/state/redis/unreachable.js";
import { StateUnavailableError } from "../../../../src/streams/stateUnavailable.js";
import { captureLogger } from "../../../fakes/logCapture.js";

const START = "start Redis at L, or fix state.redis_url (redis://host:6379/0)";

describe("a state.redis_url svc could not connect to: what to change", () => {
  it("a rediss:// server whose certificate a private CA issued: trust that CA, not start Redis", () => {
    expect(unreachable("rediss://h:6380/0", "L", "self-signed certificate in certificate chain")).toEqual({
      problem:
        "the TLS certificate of L is not issued by a CA this system trusts (self-signed certificate in certificate chain)",
      fix: "for a private or self-signed CA, start svc with NODE_EXTRA_CA_CERTS set to that CA's PEM file",
    });
    expect(unreachable("rediss://h/0", "L", "unable to verify the first certificate").fix).toContain(
      "NODE_EXTRA_CA_CERTS",
    );
  });

  it("a rediss:// certificate for another host, or out of date", () => {
    expect(
      unreachable(
        "rediss://10.0.0.5/0",
        "L",
        "Hostname/IP does not match certificate's altnames: IP: 10.0.0.5",
      ).fix,
    ).toBe(
      "write the host name the certificate lists in state.redis_url, or give the server a certificate for this host",
    );
    expect(unreachable("rediss://h/0", "L", "certificate has expired").problem).toBe(
      "the TLS certificate of L is out of date (certificate has expired)",
    );
  });

  it("a scheme that does not match the server is named as a likely cause", () => {
    // rediss:// to a server without TLS: the handshake is never answered.
    expect(unreachable("rediss://h:6379/0", "L", "connect ETIMEDOUT")).toEqual({
      problem: "cannot reach L (connect ETIMEDOUT)",
      fix: `${START}; a server without TLS needs redis://, not rediss://`,
    });
    // redis:// to a TLS port: the server resets the connection.
    expect(unreachable("redis://h:6380/0", "L", "read ECONNRESET").fix).toBe(
      `${START}; a server that expects TLS needs rediss://`,
    );
  });

  it("a server that took the connection and never answered is not one to start", () => {
    expect(unreachable("redis://h:6379/0", "L", "Command timed out")).toEqual({
      problem: "L took the connection but did not answer in time (Command timed out)",
      fix: "a frozen (SIGSTOP), paused (CLIENT PAUSE) or overloaded Redis, or another service on that port: check that server, or fix state.redis_url",
    });
  });

  it("a unix socket this user may not open: its permissions, not a Redis to start", () => {
    expect(unreachable("redis://localhost/0?path=/run/r.sock", "L", "connect EACCES /run/r.sock")).toEqual({
      problem: "cannot reach L (connect EACCES /run/r.sock)",
      fix: "this user may not open that socket: let it (unixsocketperm in Redis's redis.conf, or the socket's group), or fix state.redis_url",
    });
  });

  it("a rediss:// server that reset the connection may want a client certificate (its alert came after the reset)", () => {
    expect(unreachable("rediss://h:6380/0", "L", "write ECONNRESET").fix).toBe(
      `${START}; a Redis that requires a TLS client certificate (tls-auth-clients yes, its default with TLS) resets svc, which sends none: set tls-auth-clients optional in its redis.conf`,
    );
  });

  it("a rediss:// server's alert that only a client certificate brings names the client certificate; 'handshake failure' names both of its causes", () => {
    const alert = (reason: string) =>
      `800CB03F377F0000:error:0A000410:SSL routines:ssl3_read_bytes:${reason}:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 40\n`;
    const clientCert = {
      fix: "svc sends none to Redis: set tls-auth-clients optional in its redis.conf (yes, its default with TLS, refuses every client without one) and authenticate svc with the password or ACL user in state.redis_url",
    };
    expect(unreachable("rediss://h/0", "L", alert("tlsv13 alert certificate required"))).toEqual({
      problem: "L asks for a TLS client certificate (tlsv13 alert certificate required)",
      ...clientCert,
    });
    expect(unreachable("rediss://h/0", "L", alert("sslv3 alert bad certificate"))).toEqual({
      problem: "L asks for a TLS client certificate (sslv3 alert bad certificate)",
      ...clientCert,
    });
    expect(unreachable("rediss://h/0", "L", alert("sslv3 alert handshake failure"))).toEqual({
      problem: "L refused the TLS handshake (sslv3 alert handshake failure)",
      fix: "either it has no TLS version or cipher in common with svc, which speaks TLS 1.2 and 1.3 (AES-GCM and ChaCha20 ciphers among others): let the server offer those (tls-protocols, tls-ciphers and tls-ciphersuites in its redis.conf); or it requires a client certificate, which svc does not send to Redis: set tls-auth-clients optional in its redis.conf (yes, its default with TLS, refuses every client without one) and authenticate svc with the password or ACL user in state.redis_url",
    });
  });

  it("a Redis that said why it closed the connection it took (maxclients, protected mode): that reason and its fix, not a Redis to start", () => {
    const full = unreachable("redis://h/0", "L", "write EPIPE", "-ERR max number of clients reached");
    expect(full.problem).toBe(
      "L refuses new clients: it has as many as its maxclients allows (ERR max number of clients reached)",
    );
    expect(full.fix).toContain("raise maxclients in its redis.conf");
    const denied = unreachable(
      "redis://h/0",
      "L",
      "write ECONNRESET",
      "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface.",
    );
    expect(denied.problem).toBe(
      "L refuses connections from other hosts: it runs in protected mode, with no password set (DENIED Redis is running in protected mode)",
    );
    expect(denied.fix).toBe(
      "give it a password (requirepass in its redis.conf) and write it in state.redis_url (redis://:password@host:6379/0), or set protected-mode no where only trusted hosts reach it",
    );
    // Anything else it said leaves the message as the socket's error has it.
    expect(unreachable("redis://h/0", "L", "write EPIPE", "-ERR other").fix).toBe(START);
  });

  it("a server that spoke first in another protocol (SSH, SMTP), seen only as a broken pipe: no Redis, quoted", () => {
    expect(unreachable("redis://h/0", "L", "write EPIPE", "SSH-2.0-OpenSSH_9.2p1 Debian-2\u0007")).toEqual({
      problem:
        'L answered with something that is not a Redis reply (it said "SSH-2.0-OpenSSH_9.2p1 Debian-2")',
      fix: "another service listens at that address: fix the host and port in state.redis_url (Redis listens on 6379 unless its port setting says otherwise)",
    });
    expect(unreachable("redis://h/0", "L", "read ECONNRESET", "220 mail.example.com ESMTP").problem).toBe(
      'L answered with something that is not a Redis reply (it said "220 mail.example.com ESMTP")',
    );
    expect(unreachable("redis://h/0", "L", 'Unknown RESP type 0 "\u0000". Please report this.').problem).toBe(
      "L answered with something that is not a Redis reply (it began with byte 0x00)",
    );
  });

  it("nothing listening: start Redis, whatever the scheme", () => {
    expect(unreachable("redis://h/0", "L", "connect ECONNREFUSED 127.0.0.1:6379")).toEqual({
      problem: "cannot reach L (connect ECONNREFUSED 127.0.0.1:6379)",
      fix: START,
    });
    expect(unreachable("rediss://h/0", "L", "connect ECONNREFUSED 127.0.0.1:6379").fix).toBe(START);
  });
});

/** What a real client (no offline queue, as svc's request path) answers a command while its server is gone. */
async function refusedWhileDown(): Promise<unknown> {
  const { Redis } = await import("ioredis");
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const client = new Redis({
    port,
    host: "127.0.0.1",
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on("error", () => {});
  const refused = await client.get("k").then(
    () => undefined,
    (err: unknown) => err,
  );
  client.disconnect();
  expect(refused).toBeInstanceOf(Error);
  return refused;
}

describe("a Redis command refused while the connection is down, in a log line", () => {
  it("names the outage instead of ioredis's option (a real client, its server gone)", async () => {
    expect(redisCommandFailure(await refusedWhileDown())).toBe(
      "Redis is unreachable; svc reconnects by itself",
    );
  });

  it("the outage line of a request refused so names the closed connection, not ioredis's option", async () => {
    const refused = await refusedWhileDown();
    const log = captureLogger();
    const health = createRedisHealth("redis://127.0.0.1:6379/0", log.logger);
    expect(() => health.fail(refused)).toThrow(StateUnavailableError);
    expect(log.messages()).toEqual([
      "[state] Redis at redis://127.0.0.1:6379/0 is unreachable (connection closed); requests that need it are answered 503 until it is back",
    ]);
  });

  it("a worker's outage line (no webhook adapter: it takes no requests) speaks of its runs", async () => {
    const refused = await refusedWhileDown();
    const log = captureLogger();
    const health = createRedisHealth(
      "redis://127.0.0.1:6379/0",
      log.logger,
      undefined,
      undefined,
      undefined,
      "runs",
    );
    expect(() => health.fail(refused)).toThrow(StateUnavailableError);
    expect(log.messages()).toEqual([
      "[state] Redis at redis://127.0.0.1:6379/0 is unreachable (connection closed); the shared queue's runs wait until it is back (this instance takes no requests: platforms.webhook is off)",
    ]);
  });

  it("any other failure as it came", () => {
    expect(
      redisCommandFailure(new Error("WRONGTYPE Operation against a key holding the wrong kind of value")),
    ).toBe("WRONGTYPE Operation against a key holding the wrong kind of value");
  });
});
