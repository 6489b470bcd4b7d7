import { connect } from "node:net";
import { sign } from "@octokit/webhooks-methods";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";

/**
 * A route removed or replaced (SIGHUP reload) after a request's headers were admitted but before its
 * body has arrived: the request is judged under the routes in force when the body is complete, as if
 * it had arrived then — a removed route answers 404, a replaced one is served with its new config.
 */

const OLD_SECRET = "old-route-secret";
const NEW_SECRET = "new-route-secret";
const BODY = '{"action":"opened","number":7}';

interface MidBody {
  /** Resolves once the server has admitted the head (it asked for the body: 100 Continue). */
  readonly admitted: Promise<void>;
  /** Sends the body and resolves with the status line's code of the final answer. */
  finish(): Promise<number>;
}

/** Sends a signed head with `Expect: 100-continue` and holds the body back until `finish()`. */
async function holdBody(port: number, route: string, secret: string): Promise<MidBody> {
  const signature = await sign(secret, BODY);
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => {});
  let received = "";
  let onContinue: () => void = () => {};
  let onAnswer: (status: number) => void = () => {};
  const admitted = new Promise<void>((resolve) => (onContinue = resolve));
  const answered = new Promise<number>((resolve) => (onAnswer = resolve));
  socket.on("data", (data) => {
    received += data.toString("utf8");
    if (received.startsWith("HTTP/1.1 100 Continue\r\n\r\n")) onContinue();
    const final = /HTTP\/1\.1 ([2-5]\d\d) /.exec(received);
    if (final !== null) {
      onAnswer(Number(final[1]));
      socket.destroy();
    }
  });
  socket.on("close", () => onAnswer(0));
  socket.write(
    `POST /webhooks/${route} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
      `Expect: 100-continue\r\nX-GitHub-Event: issues\r\nX-GitHub-Delivery: mid-${route}-${secret}\r\n` +
      `X-Hub-Signature-256: ${signature}\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n`,
  );
  return {
    admitted,
    finish() {
      socket.write(BODY);
      return answered;
    },
  };
}

describe.each(["uws", "node"] as const)("a route changed while a body arrives, on the %s server", (http) => {
  const gw = gatewayPerTest();

  it("removed: the request is answered 404, like any request to it after the reload", async () => {
    const live = await gw.start({
      http,
      config: webhookConfig({ r: { secret: OLD_SECRET }, other: { secret: OLD_SECRET } }),
    });
    const request = await holdBody(live.gateway.port, "r", OLD_SECRET);
    await request.admitted;
    live.home.write("config.yaml", stringify(webhookConfig({ other: { secret: OLD_SECRET } })));
    live.gateway.reload();
    expect(await request.finish()).toBe(404);
  });

  it("replaced with a new secret: the request signed with the old one is refused 401; one signed with the new one is accepted", async () => {
    const live = await gw.start({ http, config: webhookConfig({ r: { secret: OLD_SECRET } }) });
    const oldSigned = await holdBody(live.gateway.port, "r", OLD_SECRET);
    const newSigned = await holdBody(live.gateway.port, "r", NEW_SECRET);
    await Promise.all([oldSigned.admitted, newSigned.admitted]);
    live.home.write("config.yaml", stringify(webhookConfig({ r: { secret: NEW_SECRET } })));
    live.gateway.reload();
    expect(await oldSigned.finish()).toBe(401);
    expect(await newSigned.finish()).toBe(202);
  });

  it("unchanged by a reload that leaves it as it was: the request is served", async () => {
    const live = await gw.start({ http, config: webhookConfig({ r: { secret: OLD_SECRET } }) });
    const request = await holdBody(live.gateway.port, "r", OLD_SECRET);
    await request.admitted;
    live.gateway.reload();
    expect(await request.finish()).toBe(202);
  });

  it("a subscription removed (unsubscribed) while the body arrives: 404; one whose secret changed: 401", async () => {
    const subscriptions = (records: Record<string, unknown>) =>
      live.home.write("webhook_subscriptions.json", JSON.stringify(records));
    const live = await gw.start({
      http,
      config: webhookConfig({ other: { secret: OLD_SECRET } }),
      files: {
        "webhook_subscriptions.json": JSON.stringify({
          gone: { secret: OLD_SECRET },
          rekeyed: { secret: OLD_SECRET },
        }),
      },
    });
    const removed = await holdBody(live.gateway.port, "gone", OLD_SECRET);
    const rekeyed = await holdBody(live.gateway.port, "rekeyed", OLD_SECRET);
    await Promise.all([removed.admitted, rekeyed.admitted]);
    subscriptions({ rekeyed: { secret: NEW_SECRET } });
    expect(await removed.finish()).toBe(404);
    expect(await rekeyed.finish()).toBe(401);
  });
});
