import { connect, type Socket } from "node:net";
import { sign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson, rawHttp } from "../../helpers/http.js";

/**
 * Senders that do not behave: slow or stalled uploads must not hold up anyone else and must not hold a
 * connection forever (docs/webhook.md: a request not complete within 10 s has its connection closed);
 * many connections at once and headers larger than usual are served.
 */

const SECRET = "slow-sender-secret";
const BODY = '{"action":"opened","number":1}';

async function signedHead(id: string, extra = "", body = BODY): Promise<string> {
  return (
    "POST /webhooks/pr HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
    `X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: ${id}\r\n` +
    `X-Hub-Signature-256: ${await sign(SECRET, body)}\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`
  );
}

interface Watched {
  readonly socket: Socket;
  /** Resolves when the server closes the connection: how many chunks were still unsent, and what it had written. */
  readonly closed: Promise<{ unsent: number; received: string }>;
  /** Whether the connection has closed yet. */
  isClosed(): boolean;
}

/** Opens a connection and writes `chunks[i]` every `everyMs` (nothing more once they run out). */
function trickle(port: number, chunks: readonly string[], everyMs: number): Watched {
  const socket = connect(port, "127.0.0.1");
  let received = "";
  let next = 0;
  const timer = setInterval(() => {
    if (next < chunks.length && !socket.destroyed) socket.write(chunks[next++] as string);
  }, everyMs);
  socket.on("data", (d) => (received += d));
  socket.on("error", () => {});
  let isClosed = false;
  const closed = new Promise<{ unsent: number; received: string }>((resolve) =>
    socket.on("close", () => {
      isClosed = true;
      clearInterval(timer);
      resolve({ unsent: chunks.length - next, received });
    }),
  );
  return { socket, closed, isClosed: () => isClosed };
}

describe.concurrent.each(["uws", "node"] as const)("misbehaving senders on the %s server", (http) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig({ pr: { secret: SECRET } }, { rate_limit: 100_000 }),
    });
  });
  afterAll(() => gw.stop());

  it("a trickled or stalled request does not delay others and its connection is closed before the sender finishes", {
    timeout: 60_000,
  }, async () => {
    const head = await signedHead("slow-body");
    const long = JSON.stringify({ number: 1, text: "x".repeat(100) });
    const slow = [
      // A body of ~120 bytes, one byte every 200 ms: it would be complete after ~24 s.
      trickle(gw.gateway.port, [await signedHead("slow-body", "", long), ...long.split("")], 200),
      // Headers (~250 bytes) one byte every 200 ms.
      trickle(gw.gateway.port, head.split(""), 200),
      // Headers and half the body, then nothing (a client that stops mid-body).
      trickle(gw.gateway.port, [head + BODY.slice(0, 10)], 10),
      // Connected, never a byte.
      trickle(gw.gateway.port, [], 1000),
    ];
    // Every slow connection is open, and the three that write have started writing.
    await vi.waitFor(
      () => {
        expect(slow.map((s) => !s.socket.connecting)).toEqual([true, true, true, true]);
        expect(slow.slice(0, 3).map((s) => s.socket.bytesWritten > 0)).toEqual([true, true, true]);
      },
      { timeout: 5000, interval: 20 },
    );
    const others = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const body = JSON.stringify({ number: i });
        return postJson(gw.url("/webhooks/pr"), body, {
          "X-GitHub-Delivery": `quick-${i}`,
          "X-Hub-Signature-256": await sign(SECRET, body),
        });
      }),
    );
    expect(others.map((a) => a.status)).toEqual(Array(100).fill(202));
    // Not held up: all were answered while every slow sender still held its connection (the server closes
    // those only after 10 s), not after the slow ones were done with.
    expect(slow.map((s) => s.isClosed())).toEqual([false, false, false, false]);

    const ends = await Promise.all(slow.map((s) => s.closed));
    // Closed while the trickled body and the trickled headers still had bytes to send: the server did not
    // wait for them to finish (the two that stopped writing would otherwise hold their connections until
    // the test's timeout).
    expect(ends.slice(0, 2).map((end) => end.unsent > 0)).toEqual([true, true]);
    for (const end of ends) {
      // Closed without accepting: nothing, or a 408.
      expect(end.received === "" || end.received.startsWith("HTTP/1.1 408")).toBe(true);
    }
    // The trickled body never counted as a delivery: the same id is accepted now.
    const again = await rawHttp(gw.gateway.port, [head + BODY]);
    expect(again.status).toBe(202);
  });

  it("1000 connections open at once each get their answer", { timeout: 40_000 }, async () => {
    const sockets = await Promise.all(
      Array.from(
        { length: 1000 },
        () =>
          new Promise<Socket>((resolve, reject) => {
            const socket = connect(gw.gateway.port, "127.0.0.1", () => resolve(socket));
            socket.on("error", reject);
          }),
      ),
    );
    // All connected before any writes its request.
    const answers = await Promise.all(
      sockets.map(
        async (socket, i) =>
          new Promise<string>((resolve) => {
            let received = "";
            socket.on("data", (d) => {
              received += d;
              if (received.includes("\r\n\r\n") && received.endsWith("}")) {
                socket.destroy();
                resolve(received);
              }
            });
            socket.on("close", () => resolve(received));
            void signedHead(`conn-${i}`).then((head) => socket.write(head + BODY));
          }),
      ),
    );
    expect(answers.filter((a) => !a.startsWith("HTTP/1.1 202"))).toEqual([]);
  });

  it("headers larger than usual (8 KiB, 32 KiB, 100 KiB in all) are read", async () => {
    for (const size of [8 * 1024, 32 * 1024, 100 * 1024]) {
      // A long cookie and a long bearer token, as a proxy or an SSO layer may add.
      const half = "a".repeat(size / 2);
      const answer = await rawHttp(gw.gateway.port, [
        (await signedHead(`big-${size}`, `Cookie: session=${half}\r\nAuthorization: Bearer ${half}\r\n`)) +
          BODY,
      ]);
      expect(answer.status, `${size}`).toBe(202);
    }
  });
});
