import { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sleepOn, systemClock } from "../../../src/clock.js";
import type { RequestHandler } from "../../../src/io/http/core.js";
import { listenUws, loadUws, type UwsServerHandle } from "../../../src/io/http/uws.js";
import { type FakeClock, fakeClock } from "../../helpers/gateway.js";

const TOO_LARGE = { status: 413, body: { error: "Payload too large" } };

/** Answers every request 413 from its head, before reading its body, as step 2 does. */
const early: RequestHandler = (_head, _body, reply) => reply(TOO_LARGE, true);

/** Writes `head` (and `body`, if any) and resolves with what the server wrote up to its close. */
function exchange(port: number, head: string, body?: Buffer): Promise<{ text: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let text = "";
    let error: string | undefined;
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
    });
    socket.on("error", (err: NodeJS.ErrnoException) => {
      error = err.code ?? err.message;
    });
    socket.on("close", () => resolve(error === undefined ? { text } : { text, error }));
    socket.connect(port, "127.0.0.1", () => {
      socket.write(head);
      if (body !== undefined) socket.write(body);
    });
  });
}

describe("uWS early answer to a request that says Connection: close", () => {
  // The linger timers run on a clock the test never advances: an answer that waited for one never came.
  let clock: FakeClock;
  let server: UwsServerHandle;
  beforeAll(async () => {
    const loaded = await loadUws();
    if (!("uws" in loaded)) throw new Error(loaded.error);
    clock = fakeClock();
    server = await listenUws(loaded.uws, early, {
      host: "127.0.0.1",
      port: 0,
      clock: {
        ...systemClock,
        now: clock.now,
        setTimeout: clock.setTimeout,
        clearTimeout: clock.clearTimeout,
        sleep: sleepOn(clock),
      },
    });
  });
  afterAll(async () => {
    server.close();
    await server.ended?.();
  });

  it("is written once the declared body is read, so the close resets nothing", {
    timeout: 20_000,
  }, async () => {
    const body = Buffer.alloc(8 * 1024 * 1024, 0x78);
    const answer = await exchange(
      server.port,
      `POST /webhooks/r HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      body,
    );
    expect(answer.error).toBeUndefined();
    expect(answer.text).toMatch(/^HTTP\/1\.1 413 [\s\S]*\r\n\r\n\{"error":"Payload too large"\}$/);
  });

  it("is written at once to a sender waiting for the 100 Continue uWS does not send to 100-Continue", {
    timeout: 10_000,
  }, async () => {
    // Java's HttpClient writes the expectation so; uWS answers `100 Continue` only to `100-continue`, so
    // no body is coming and the answer must not wait for one (it waited for the sender's pause).
    const answer = await exchange(
      server.port,
      "POST /webhooks/r HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\nExpect: 100-Continue\r\nConnection: close\r\n\r\n",
    );
    expect(answer.text).toMatch(/^HTTP\/1\.1 413 [\s\S]*\r\n\r\n\{"error":"Payload too large"\}$/);
    expect(clock.pendingTimers()).toBe(0);
  });
});
