import { connect, type Socket } from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { sleepOn, systemClock } from "../../../src/clock.js";
import { BODIES_BUSY } from "../../../src/io/http/core.js";
import { REQUEST_DEADLINE_MS } from "../../../src/io/http/listen.js";
import {
  listenUws,
  loadUws,
  type UwsRequestHandler,
  type UwsServerHandle,
} from "../../../src/io/http/uws.js";
import { type FakeClock, fakeClock } from "../../helpers/gateway.js";
import { rawHttp } from "../../helpers/http.js";

/**
 * docs/webhook.md: on uWS a request whose body is not all in within 10–11 s of the end of its head (uWS
 * gives the head its own 10 s before: up to ~21 s from the first byte, where node:http counts 10 s) has its
 * connection closed with no answer, however it trickles, and a body holds what it took of the bound on the
 * bodies buffered at once for at most that deadline. An early answer whose body is still arriving waits for
 * it (a pause, or 5 s more, closes it). uWS's own idle timeout (10 s) starts again each
 * time 160 KiB more have come (16 KiB/s): a sender writing 20,000 bytes every 500 ms was answered 202 at
 * +26.6 s, and 80 of them held the bound past the deadline (every other request with a body answered 503).
 * The deadline is swept on the listener's clock, a fake one here, while the senders write faster than
 * uWS's floor in real time: a close can only be svc's.
 */

const LIMIT = 2 * 1024 * 1024;
/** What a sender writes at each step: 8 KiB, so 160 KiB in 4 s of real time when written every 200 ms. */
const STEP = "x".repeat(8 * 1024);
/**
 * The listener is one of 64 sharing the bound (as an ingress thread is of N): it holds one body of LIMIT, so
 * a body arriving leaves no room for a whole other one.
 */
const SHARES = 64;

/** Answers 202 once the body is in, as the pipeline does; 503 when the bodies arriving hold the bound. */
let heads = 0;
const handler: UwsRequestHandler = (_head, body, reply) => {
  heads += 1;
  body.read(LIMIT, (received) => {
    if (received === "busy") reply(BODIES_BUSY, true);
    else if (received === "too_large") reply({ status: 413, body: { error: "Payload too large" } }, true);
    else reply({ status: 202, body: { status: "accepted" } });
  });
};

interface Sender {
  readonly socket: Socket;
  /** What the server wrote back. */
  text: string;
  closed: boolean;
}

let clock: FakeClock;
let timersSet = 0;
let server: UwsServerHandle;
let senders: Sender[] = [];

beforeEach(async () => {
  const loaded = await loadUws();
  if (!("uws" in loaded)) throw new Error(loaded.error);
  clock = fakeClock();
  timersSet = 0;
  heads = 0;
  server = await listenUws(loaded.uws, handler, {
    host: "127.0.0.1",
    port: 0,
    bodyShares: SHARES,
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

afterEach(async () => {
  for (const sender of senders) sender.socket.destroy();
  senders = [];
  server.close();
  server.closeAll();
});

/** Opens a connection and writes `first` (a head, and the start of its body). */
function send(first: string): Sender {
  const socket = connect(server.port, "127.0.0.1", () => socket.write(first));
  const sender: Sender = { socket, text: "", closed: false };
  socket.on("data", (data) => {
    sender.text += data.toString("latin1");
  });
  socket.on("error", () => {});
  socket.on("close", () => {
    sender.closed = true;
  });
  senders.push(sender);
  return sender;
}

/** A whole request with a body of `size` bytes, in one write. */
function whole(size: number) {
  return rawHttp(server.port, [
    `POST /webhooks/r HTTP/1.1\r\nHost: x\r\nContent-Length: ${size}\r\n\r\n${"x".repeat(size)}`,
  ]);
}

/** Moves the clock on in steps of 500 ms, each sender writing `bytes` more before each step. */
async function trickle(from: readonly Sender[], bytes: string, ms: number): Promise<void> {
  for (let at = 0; at < ms; at += 500) {
    await Promise.all(
      from.map((sender) => new Promise<void>((resolve) => sender.socket.write(bytes, () => resolve()))),
    );
    clock.advance(500);
  }
}

/**
 * Waits until each sender is closed, each still writing `bytes` every 200 ms meanwhile (past uWS's floor of
 * 160 KiB per 10 s), the clock left where it is.
 */
function closedSending(from: readonly Sender[], bytes: string): Promise<void> {
  return vi.waitFor(
    () => {
      for (const sender of from) if (!sender.closed) sender.socket.write(bytes);
      expect(from.map((sender) => sender.closed)).toEqual(from.map(() => true));
    },
    { timeout: 15_000, interval: 200 },
  );
}

describe("the uWS request deadline", () => {
  it("closes a declared body trickled steadily past 10 s with no answer, and frees what it held of the bound: a whole body then gets 202", {
    timeout: 30_000,
  }, async () => {
    // A body arriving holds part of the listener's share of the bound: a whole other one does not fit.
    const trickling = [
      send(`POST /webhooks/r HTTP/1.1\r\nHost: x\r\nContent-Length: ${LIMIT}\r\n\r\n{${STEP}`),
    ];
    await vi.waitFor(() => expect(heads).toBe(1), { timeout: 10_000 });
    await vi.waitFor(async () => expect((await whole(LIMIT)).status).toBe(503), { timeout: 10_000 });
    // 8 KiB every 500 ms of the clock: all in at ~2 min, had it been let.
    await trickle(trickling, STEP, REQUEST_DEADLINE_MS - 500);
    // Short of the deadline: still read, still holding the bound.
    expect((await whole(LIMIT)).status).toBe(503);
    expect(trickling.filter((sender) => sender.closed)).toEqual([]);
    await trickle(trickling, STEP, 1500);
    await closedSending(trickling, STEP);
    // Closed unanswered, as uWS closes a connection that stalls.
    expect(trickling.map((sender) => sender.text)).toEqual(trickling.map(() => ""));
    const later = await whole(LIMIT);
    expect(later.status).toBe(202);
    // The sweep stops once no body is arriving.
    clock.advance(1000);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("counts a chunked body's deadline from its head, not from its first chunk", {
    timeout: 30_000,
  }, async () => {
    const sender = send("POST /webhooks/r HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    await vi.waitFor(() => expect(heads).toBe(1), { timeout: 10_000 });
    clock.advance(5000);
    const chunk = `2000\r\n${STEP}\r\n`;
    await trickle([sender], chunk, 4500);
    expect((await whole(16)).status).toBe(202);
    expect(sender.closed).toBe(false);
    // 10 s after the head (the sweep looks every second), 5.5 s after the first chunk.
    await trickle([sender], chunk, 1500);
    await closedSending([sender], chunk);
    expect(sender.text).toBe("");
  });

  it("answers a body that is in before the deadline, and sets no timer for one that comes whole in its first chunk", {
    timeout: 30_000,
  }, async () => {
    const before = timersSet;
    expect((await whole(1024)).status).toBe(202);
    expect(timersSet).toBe(before);
    const sender = send(`POST /webhooks/r HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n`);
    await vi.waitFor(() => expect(heads).toBe(2), { timeout: 10_000 });
    await trickle([sender], "x".repeat(2), 9500);
    await new Promise<void>((resolve) => sender.socket.write("x".repeat(2), () => resolve()));
    await vi.waitFor(() => expect(sender.text).toMatch(/^HTTP\/1\.1 202 /), { timeout: 10_000 });
    expect(sender.closed).toBe(false);
    // Its deadline is gone with it: the connection serves the next request.
    clock.advance(REQUEST_DEADLINE_MS);
    sender.text = "";
    sender.socket.write("POST /webhooks/r HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
    await vi.waitFor(() => expect(sender.text).toMatch(/^HTTP\/1\.1 202 /), { timeout: 10_000 });
  });
});
