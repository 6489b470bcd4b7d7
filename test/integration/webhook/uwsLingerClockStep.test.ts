import { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sleepOn, systemClock } from "../../../src/clock.js";
import type { RequestHandler } from "../../../src/io/http/core.js";
import { listenUws, loadUws, type UwsServerHandle } from "../../../src/io/http/uws.js";
import { type FakeClock, fakeClock } from "../../helpers/gateway.js";

/** Answers every request 413 from its head, before reading its body, as step 2 does. */
const early: RequestHandler = (_head, _body, reply) =>
  reply({ status: 413, body: { error: "Payload too large" } }, true);

/**
 * The 5 s bound on reading (and dropping) the rest of a chunked body after an early answer is a duration:
 * it is measured on the clock that is never set, so a step of the system clock (NTP) while the sender is
 * still sending neither ends it at once (the answer and close written under the sender's next chunk reset
 * its connection before it reads the 413) nor makes it last the hour of a step back.
 */
describe("uWS linger after an early answer across a step of the system clock", () => {
  let clock: FakeClock;
  let timersSet = 0;
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
        elapsed: clock.elapsed,
        setTimeout: (fn, ms) => {
          timersSet += 1;
          return clock.setTimeout(fn, ms);
        },
        clearTimeout: clock.clearTimeout,
        sleep: sleepOn(clock),
      },
    });
  });
  afterAll(async () => {
    server.close();
    await server.ended?.();
  });

  it("a step forward does not end the linger: the body is still read to its end, then answered", {
    timeout: 10_000,
  }, async () => {
    const socket = new Socket();
    let text = "";
    let error: string | undefined;
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
    });
    socket.on("error", (err: NodeJS.ErrnoException) => {
      error = err.code ?? err.message;
    });
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
    await new Promise<void>((resolve) => socket.connect(server.port, "127.0.0.1", resolve));
    socket.write(
      "POST /webhooks/r HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n4\r\nabcd\r\n",
    );
    // The first chunk is read: the linger waits for the next one (its idle timer is set).
    await vi.waitFor(() => expect(timersSet).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
    const before = timersSet;
    clock.step(3_600_000);
    socket.write("4\r\nefgh\r\n");
    // The chunk read after the step: the linger goes on (a new idle timer), no answer yet.
    await vi.waitFor(() => expect(timersSet > before || text !== "").toBe(true), { timeout: 10_000 });
    expect(text).toBe("");
    expect(timersSet).toBe(before + 1);
    socket.write("0\r\n\r\n");
    await closed;
    expect(error).toBeUndefined();
    expect(text).toMatch(/^HTTP\/1\.1 413 [\s\S]*\r\n\r\n\{"error":"Payload too large"\}$/);
  });
});
