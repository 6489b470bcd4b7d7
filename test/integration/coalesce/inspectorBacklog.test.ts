import { execFile } from "node:child_process";
import { connect, type Socket } from "node:net";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startInspectRelay } from "../../../src/io/inspectRelay.js";
import { onPickedPort } from "../../helpers/http.js";
import { openInspectorClient } from "../../helpers/inspectorClient.js";

/**
 * The relay sends every event to every client. A client that reads nothing (a suspended browser tab, a
 * `wscat` stopped with Ctrl-Z) kept every later event in the gateway's memory, without bound; past its
 * backlog bound it is disconnected, and the relay goes on for the others.
 */
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A WebSocket handshake over a raw socket that then reads nothing more. */
function stalledClient(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const raw = connect(port, "127.0.0.1");
    raw.once("error", reject);
    raw.write(
      "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    raw.once("data", () => {
      raw.pause();
      resolve(raw);
    });
  });
}

describe("--inspect relay: a client that stops reading", () => {
  it("is disconnected past its backlog bound instead of holding every event; the others go on", async () => {
    const [port, relay] = await onPickedPort((picked) => startInspectRelay(picked, "127.0.0.1", 256 * 1024));
    cleanups.push(() => relay.stop());
    const stalled = await stalledClient(port);
    cleanups.push(() => stalled.destroy());
    let stalledClosed = false;
    stalled.once("close", () => {
      stalledClosed = true;
    });
    const watcher = await openInspectorClient(`ws://127.0.0.1:${port}`);
    cleanups.push(() => watcher.socket.terminate());
    const sender = await openInspectorClient(relay.sourceUrl);
    cleanups.push(() => sender.socket.terminate());
    // Far more than the kernel's socket buffers take on loopback (a few MB), 1 MiB per event.
    const event = JSON.stringify({ type: "@xstate.event", blob: "e".repeat(1024 * 1024) });
    for (let sent = 1; sent <= 32; sent++) {
      sender.socket.send(event);
      await vi.waitFor(() => expect(watcher.messages.length).toBe(sent), { timeout: 10_000, interval: 10 });
    }
    // Reading again, it gets what the kernel held for it, then the relay's close (it stayed open before).
    stalled.on("data", () => {});
    stalled.resume();
    await vi.waitFor(() => expect(stalledClosed).toBe(true), { timeout: 20_000, interval: 50 });
    // The relay goes on: the watcher still gets what is sent after.
    sender.socket.send('{"type":"@xstate.snapshot"}');
    await vi.waitFor(() => expect(watcher.messages).toContain('{"type":"@xstate.snapshot"}'), {
      timeout: 5000,
      interval: 20,
    });
  }, 60_000);

  it("a late client is not disconnected for its replay, however large the events kept for it", async () => {
    const [port, relay] = await onPickedPort((picked) => startInspectRelay(picked, "127.0.0.1", 256 * 1024));
    cleanups.push(() => relay.stop());
    const sender = await openInspectorClient(relay.sourceUrl);
    cleanups.push(() => sender.socket.terminate());
    const watcher = await openInspectorClient(`ws://127.0.0.1:${port}`);
    cleanups.push(() => watcher.socket.terminate());
    // 24 MiB kept for late clients (the last 200 events), far past the bound and the kernel's buffers.
    const event = JSON.stringify({ type: "@xstate.event", blob: "k".repeat(1024 * 1024) });
    for (let sent = 1; sent <= 24; sent++) {
      sender.socket.send(event);
      await vi.waitFor(() => expect(watcher.messages.length).toBe(sent), { timeout: 10_000, interval: 10 });
    }
    // A late client that has not read its replay yet when the next event comes.
    const late = await stalledClient(port);
    cleanups.push(() => late.destroy());
    let closed = false;
    late.once("close", () => {
      closed = true;
    });
    const marker = "next-event-after-replay-8e4f";
    sender.socket.send(JSON.stringify({ type: "@xstate.event", marker }));
    await vi.waitFor(() => expect(watcher.messages.at(-1)).toContain(marker), {
      timeout: 5000,
      interval: 10,
    });
    let tail = "";
    let found = false;
    late.on("data", (chunk: Buffer) => {
      tail = (tail + chunk.toString("latin1")).slice(-1000);
      if (tail.includes(marker)) found = true;
    });
    late.resume();
    await vi.waitFor(() => expect(found).toBe(true), { timeout: 20_000, interval: 50 });
    expect(closed).toBe(false);
  }, 60_000);

  it("a watching client that sends a large frame is closed (1009) instead of it being read whole", async () => {
    const [port, relay] = await onPickedPort((picked) => startInspectRelay(picked));
    cleanups.push(() => relay.stop());
    const watcher = await openInspectorClient(`ws://127.0.0.1:${port}`);
    cleanups.push(() => watcher.socket.terminate());
    const big = await openInspectorClient(`ws://127.0.0.1:${port}`);
    cleanups.push(() => big.socket.terminate());
    const closed = new Promise<number>((resolve) => big.socket.once("close", (code) => resolve(code)));
    big.socket.send("w".repeat(1024 * 1024));
    expect(await closed).toBe(1009);
    // One far larger, from a client process of its own, still gets its close frame, not a reset with the
    // rest of its frame unread (1006).
    expect(await closeCodesOfLargeFrames(port, 4 * 1024 * 1024, 3)).toEqual([1009, 1009, 1009]);
    // The relay goes on for the others.
    const sender = await openInspectorClient(relay.sourceUrl);
    cleanups.push(() => sender.socket.terminate());
    sender.socket.send('{"type":"@xstate.event","n":1}');
    await vi.waitFor(() => expect(watcher.messages).toContain('{"type":"@xstate.event","n":1}'), {
      timeout: 5000,
      interval: 20,
    });
  }, 60_000);
});

/** The close codes `count` watchers, in a node process of their own, get for one frame of `bytes` each. */
async function closeCodesOfLargeFrames(port: number, bytes: number, count: number): Promise<number[]> {
  const script = `
    import { WebSocket } from "ws";
    const codes = [];
    for (let i = 0; i < ${count}; i++) {
      const socket = new WebSocket("ws://127.0.0.1:${port}");
      await new Promise((resolve, reject) => { socket.once("open", resolve); socket.once("error", reject); });
      socket.on("error", () => {});
      codes.push(await new Promise((resolve) => {
        socket.once("close", resolve);
        socket.send("x".repeat(${bytes}));
      }));
    }
    console.log(JSON.stringify(codes));`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
    cwd: import.meta.dirname,
  });
  return JSON.parse(stdout) as number[];
}
