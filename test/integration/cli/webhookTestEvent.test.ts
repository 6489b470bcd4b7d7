import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc, svcEach } from "./svc.js";

let gw: TestGateway | undefined;
let home: TempHome | undefined;
let server: Server | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  home?.cleanup();
  home = undefined;
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
  server = undefined;
});

/** Ports the Fetch standard's "bad port" list blocks (fetch fails with cause "bad port" before connecting). */
const FETCH_BAD_PORTS = [6665, 6666, 6667, 6668, 6669, 6697, 10080, 6000, 5060, 5061, 6566];

/** A server on the first of those ports free here, answering as the gateway does; undefined if none is. */
async function listenOnBadPort(): Promise<{ server: Server; port: number; seen: string[] } | undefined> {
  const seen: string[] = [];
  for (const port of FETCH_BAD_PORTS) {
    const candidate = createServer((req, res) => {
      seen.push(
        `${req.method} ${req.url} ${req.headers["x-webhook-signature-v2"] === undefined ? "unsigned" : "signed"}`,
      );
      req.resume();
      req.on("end", () => {
        res.writeHead(202, { "content-type": "application/json" });
        res.end('{"status":"accepted"}');
      });
    });
    const bound = await new Promise<boolean>((resolve) => {
      candidate.once("error", () => resolve(false));
      candidate.listen(port, "127.0.0.1", () => resolve(true));
    });
    if (bound) return { server: candidate, port: (candidate.address() as AddressInfo).port, seen };
  }
  return undefined;
}

describe("svc webhook test: which event type it sends (spec 4.3)", { timeout: 90_000 }, () => {
  it("--event, else the event type of --payload (event_type, type, ... as the gateway reads it), else the subscription's first event", async () => {
    gw = await startTestGateway({ config: webhookConfig({}) });
    const port = String(gw.gateway.port);
    const { home } = gw;
    await svc(home, ["webhook", "subscribe", "gh", "--events", "push,pull_request"]);
    const [fromPayload, fromFlag, fromRecord, fromType, fromJira] = await svcEach(home, [
      ["webhook", "test", "gh", "--port", port, "--payload", '{"event_type":"pull_request"}'],
      ["webhook", "test", "gh", "--port", port, "--payload", '{"event_type":"x"}', "--event", "push"],
      ["webhook", "test", "gh", "--port", port, "--payload", '{"number":1}'],
      // Stripe's (and Standard Webhooks') event type is the body's `type`: a real delivery of this payload
      // is ignored by the route, and so is the test of it, not sent as the subscription's first event.
      ["webhook", "test", "gh", "--port", port, "--payload", '{"type":"customer.created"}'],
      ["webhook", "test", "gh", "--port", port, "--payload", '{"webhookEvent":"pull_request"}'],
    ]);
    expect(fromType).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('{"status":"ignored","event":"customer.created"}'),
    });
    expect(fromJira).toMatchObject({ code: 0, stdout: expect.stringContaining('"event":"pull_request"') });
    expect(fromPayload).toMatchObject({ code: 0, stdout: expect.stringContaining('"event":"pull_request"') });
    expect(fromFlag).toMatchObject({ code: 0, stdout: expect.stringContaining('"event":"push"') });
    expect(fromRecord).toMatchObject({ code: 0, stdout: expect.stringContaining('"event":"push"') });
  });

  it("the default payload names the event it sends: one a header cannot carry reaches the gateway in the body", async () => {
    const seen: { header: string | string[] | undefined; body: { event_type?: unknown } }[] = [];
    server = createServer((req, res) => {
      let text = "";
      req.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
      });
      req.on("end", () => {
        seen.push({ header: req.headers["x-forge-event"], body: JSON.parse(text) });
        res.writeHead(202, { "content-type": "application/json" });
        res.end('{"status":"accepted"}');
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const port = String((server.address() as AddressInfo).port);
    home = tempHome();
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1" } } }));
    await svc(home, ["webhook", "subscribe", "bank", "--events", "Überweisung,push"]);
    await svc(home, ["webhook", "subscribe", "gh", "--events", "push"]);
    expect(await svc(home, ["webhook", "test", "bank", "--port", port])).toMatchObject({ code: 0 });
    expect(await svc(home, ["webhook", "test", "gh", "--port", port])).toMatchObject({ code: 0 });
    expect(seen).toMatchObject([
      { header: undefined, body: { event_type: "Überweisung" } },
      { header: "push", body: { event_type: "push" } },
    ]);
  });

  it("reaches a gateway on a port fetch calls bad (6666, 10080, ...), where the gateway may listen", async () => {
    const listening = await listenOnBadPort();
    if (listening === undefined) throw new Error("every port fetch calls bad is taken on this machine");
    server = listening.server;
    home = tempHome();
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1" } } }));
    await svc(home, ["webhook", "subscribe", "gh"]);
    const sent = await svc(home, ["webhook", "test", "gh", "--port", String(listening.port)]);
    expect(sent.stderr).not.toContain("cannot reach");
    expect(sent).toMatchObject({ code: 0, stdout: expect.stringMatching(/^202 Accepted$/m) });
    expect(listening.seen).toEqual(["POST /webhooks/gh signed"]);
  });
});
