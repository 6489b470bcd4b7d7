import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerWaitMs, postToGateway } from "../../../src/cli/webhook/postToGateway.js";
import { configSchema } from "../../../src/config/schema.js";

/** How long `svc webhook test` / `redeliver` wait for the gateway, and what they say when it does not answer. */
describe("answerWaitMs", () => {
  const config = configSchema.parse({ platforms: { telegram: { timeout_seconds: 20 } } });

  it("an agent-mode route is answered once the event is recorded: 10 s", () => {
    expect(answerWaitMs(config, { deliver: "telegram", deliver_only: false })).toBe(10_000);
  });

  it("a direct delivery answers after its platform did: its timeout_seconds and the chat queue's 10 s on top", () => {
    // Waiting only 10 s, a test of a direct route whose platform took 12 s said the gateway could not be reached.
    expect(answerWaitMs(config, { deliver: "chat_1", deliver_only: true })).toBe(40_000);
    expect(answerWaitMs(config, { deliver: "discord", deliver_only: true })).toBe(35_000);
  });

  it("timeouts at the longest a timer holds (2147483 s, what a longer one counts as) keep the wait within it: no TimeoutOverflowWarning", () => {
    const long = configSchema.parse({
      platforms: { telegram: { timeout_seconds: 99999999 }, webhook: { script_timeout_seconds: 99999999 } },
    });
    expect(answerWaitMs(long, { deliver: "telegram", deliver_only: true, script: "f.py" })).toBe(2 ** 31 - 1);
  });

  it("a route with a script answers after the script: script_timeout_seconds on top", () => {
    expect(answerWaitMs(config, { deliver: "log", deliver_only: false, script: "f.py" })).toBe(40_000);
  });
});

describe("postToGateway", () => {
  let silent: Server;
  let port: number;
  beforeAll(async () => {
    // Takes the connection and the request, never answers (a gateway busy with a slow direct delivery).
    silent = createServer((socket) => socket.on("data", () => {}));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    port = (silent.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => silent.close(resolve));
  });

  const route = (waitMs: number) => ({
    name: "tg",
    waitMs,
    settings: { deliver: "telegram", deliver_only: true },
  });

  it("a gateway that took the request but did not answer in time is not called unreachable", async () => {
    const url = `http://127.0.0.1:${port}/webhooks/tg`;
    const error = await postToGateway(url, { headers: {}, body: "{}" }, route(100), "start it").catch(
      (e: unknown) => e as Error,
    );
    expect((error as Error).message).toBe(
      `the gateway at ${url} took the request but gave no answer within 0.1 s (a direct delivery answers once telegram has answered) — it may still be handling it: svc webhook deliveries tg shows how it ended, and the gateway log says why`,
    );
  });

  it("a port nobody listens on is unreachable, with the hint to start the gateway", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const url = `http://127.0.0.1:${freePort}/webhooks/tg`;
    await expect(postToGateway(url, { headers: {}, body: "{}" }, route(1000), "start it")).rejects.toThrow(
      `cannot reach the gateway at ${url} (connect ECONNREFUSED 127.0.0.1:${freePort}) — start it`,
    );
  });
});
