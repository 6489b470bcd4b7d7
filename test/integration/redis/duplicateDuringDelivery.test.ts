import { randomUUID } from "node:crypto";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { type ClusterNode, clusterConfig, startNode } from "../../helpers/redisCluster.js";

/**
 * Spec 6 with `state.backend: redis`, on one instance: a duplicate sent at the same moment as its original
 * (a sender that sends twice at once) waits for the original's direct delivery, as with the local backend
 * (test/integration/webhook/duplicateDuringDelivery.test.ts): 502 like it when it fails, never a delivery
 * of its own. It used to find the shared record not yet marked as delivering, look again 100 ms later,
 * find it forgotten by the failed original, and deliver the event a second time (38 sends for 20 events).
 */

let redis: TestRedis;
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(() => redis.cleanup());

/** Connects `n` sockets to `port`, then writes `request` on each in the same turn; each one's status and body. */
async function sendAtOnce(port: number, request: string, n: number): Promise<string[]> {
  const sockets = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(port, "127.0.0.1", () => resolve(socket));
          socket.on("error", reject);
        }),
    ),
  );
  const answers = sockets.map(
    (socket) =>
      new Promise<string>((resolve) => {
        let text = "";
        socket.on("data", (chunk) => {
          text += chunk;
        });
        // Each request says `Connection: close`: its answer is whole once the gateway closes the connection.
        socket.on("close", () => resolve(text));
      }),
  );
  for (const socket of sockets) socket.write(request);
  const texts = await Promise.all(answers);
  for (const socket of sockets) socket.destroy();
  return texts.map((text) => `${text.slice(9, 12)} ${text.slice(text.indexOf("\r\n\r\n") + 4)}`);
}

describe("state.backend: redis — a duplicate sent with its original to a deliver_only route", {
  timeout: 30_000,
}, () => {
  let node: ClusterNode;
  let telegram: Awaited<ReturnType<typeof startFakeTelegram>>;
  afterAll(async () => {
    await node?.stop();
    await telegram?.close();
  });

  it("the delivery fails: both are 502, and the event is sent to the platform once, not once per copy", async () => {
    telegram = await startFakeTelegram();
    telegram.setHandler((request) =>
      request.path.endsWith("/sendMessage")
        ? {
            status: 400,
            json: { ok: false, error_code: 400, description: "Bad Request: chat not found" },
            // Refused well within the 100 ms after which the duplicate looked at the shared record again,
            // and long after the duplicate (written in the same turn) has reached the gateway.
            delayMs: 60,
          }
        : { json: { ok: true, result: { id: 42, is_bot: true, username: "svc_test_bot" } } },
    );
    const config = clusterConfig(
      redis.url,
      `d${randomUUID()}`,
      {
        notify: {
          secret: "INSECURE_NO_AUTH",
          deliver: "telegram",
          deliver_only: true,
          prompt: "Deploy {n}",
          deliver_extra: { chat_id: "7" },
        },
      },
      { provider: "echo" },
    );
    const platforms = config.platforms as Record<string, unknown>;
    platforms.telegram = { enabled: true, token: "123:abc", base_url: telegram.url };
    node = await startNode(config);
    const port = Number(new URL(node.url("/")).port);
    const ids = Array.from({ length: 20 }, (_, i) => `twice-${i}`);
    const answers: string[][] = [];
    for (const id of ids) {
      const body = JSON.stringify({ n: id });
      const request =
        `POST /webhooks/notify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Request-ID: ${id}\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
      answers.push(await sendAtOnce(port, request, 2));
    }
    expect(answers.flat().filter((a) => a !== '502 {"error":"Delivery failed"}')).toEqual([]);
    const sends = telegram.requests.filter((r) => r.path.endsWith("/sendMessage"));
    expect(sends.length).toBe(ids.length);
  });
});
