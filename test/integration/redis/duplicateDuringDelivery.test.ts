import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { type ClusterNode, clusterConfig, startNode } from "../../helpers/redisCluster.js";

/**
 * Spec 6 with `state.backend: redis`, on one instance: a duplicate sent at the same moment as its original
 * (a sender that sends twice at once) waits for the original's direct delivery, as with the local backend
 * (test/integration/webhook/duplicateDuringDelivery.test.ts): 502 like it when it fails, never a delivery
 * of its own. It used to find the shared record not yet marked as delivering, look again 100 ms later,
 * find it forgotten by the failed original, and deliver the event a second time (38 sends for 20 events).
 * Sent to two instances at once (two `svc gateway run` processes: in one process the two instances'
 * commands seldom interleave so), one of them could be answered `duplicate` for an event that was never
 * delivered (1 to 4 of 20): the original's id was given its hour (`keep`) before it was marked as
 * delivering, and the other instance, looking in between, took it for an event handled.
 */

let redis: TestRedis;
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(() => redis.cleanup());

/** Connects a socket to each of `ports`, then writes `request` on each in the same turn; each one's status and body. */
async function sendAtOnce(ports: readonly number[], request: string): Promise<string[]> {
  const sockets = await Promise.all(
    ports.map(
      (port) =>
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

type Telegram = Awaited<ReturnType<typeof startFakeTelegram>>;

/** A fake Telegram that refuses every message, 60 ms after it came. */
async function refusingTelegram(): Promise<Telegram> {
  const telegram = await startFakeTelegram();
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
  return telegram;
}

/** The config of an instance on the test's Redis under `prefix`, with a deliver_only route to `telegram`. */
function notifyConfig(telegram: Telegram, prefix: string): Record<string, unknown> {
  const config = clusterConfig(
    redis.url,
    prefix,
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
  return config;
}

const portOf = (node: ClusterNode) => Number(new URL(node.url("/")).port);

/** Event `id`, sent to each of `ports` at once (one socket each); the answers. */
function sendEverywhere(ports: readonly number[], id: string): Promise<string[]> {
  const body = JSON.stringify({ n: id });
  const request =
    `POST /webhooks/notify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Request-ID: ${id}\r\n` +
    `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
  return sendAtOnce(ports, request);
}

const sendMessages = (telegram: Telegram) =>
  telegram.requests.filter((r) => r.path.endsWith("/sendMessage")).length;

// The two tests run at once (describe.concurrent), each with its fake Telegram, key prefix and gateways of its
// own: each mostly waits on its sends one after another (the refusal comes 60 ms after each).
describe.concurrent("state.backend: redis — a duplicate sent with its original to a deliver_only route", {
  timeout: 30_000,
}, () => {
  it("the delivery fails: both are 502, and the event is sent to the platform once, not once per copy", async ({
    onTestFinished,
  }) => {
    const telegram = await refusingTelegram();
    onTestFinished(() => telegram.close());
    const node = await startNode(notifyConfig(telegram, `d${randomUUID()}`));
    onTestFinished(() => node.stop());
    const ids = Array.from({ length: 20 }, (_, i) => `twice-${i}`);
    const answers: string[][] = [];
    for (const id of ids) answers.push(await sendEverywhere([portOf(node), portOf(node)], id));
    expect(answers.flat().filter((a) => a !== '502 {"error":"Delivery failed"}')).toEqual([]);
    expect(sendMessages(telegram)).toBe(ids.length);
  });

  it("sent to two instances (two processes) at once and the delivery fails: neither is answered duplicate (the event was never delivered)", async ({
    onTestFinished,
  }) => {
    const refusing = await refusingTelegram();
    onTestFinished(() => refusing.close());
    const children: ChildProcess[] = [];
    const homes: TempHome[] = [];
    onTestFinished(() => {
      for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
      for (const home of homes) home.cleanup();
    });
    const prefix = `d${randomUUID()}`;
    const gateways = await Promise.all(
      [0, 1].map(() => {
        const home = tempHome();
        homes.push(home);
        home.write("config.yaml", stringify(notifyConfig(refusing, prefix)));
        return startCliGateway(home, children);
      }),
    );
    const ids = Array.from({ length: 40 }, (_, i) => `both-${i}`);
    const answers: string[][] = [];
    for (const id of ids)
      answers.push(
        await sendEverywhere(
          gateways.map((gw) => gw.port),
          id,
        ),
      );
    expect(answers.flat().filter((a) => a !== '502 {"error":"Delivery failed"}')).toEqual([]);
  });
});
