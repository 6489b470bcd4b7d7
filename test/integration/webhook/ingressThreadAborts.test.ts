import { spawnSync } from "node:child_process";
import { connect, createServer, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RequestHandler } from "../../../src/io/http/core.js";
import { listenUwsThreads } from "../../../src/io/http/uwsThreads.js";
import { outcome } from "../../../src/streams/types.js";

/**
 * docs/operations.md, "Ingress threads": a client that goes away mid-body costs nothing afterwards, as
 * with `workers: 0`. The thread keeps each request until the main thread answers it; one whose client is
 * gone must be let go at once, or its partial body stays (a megabyte per aborted upload) and a stop
 * waits its whole grace for answers nobody can receive.
 */

const HOUR = 3_600_000;

function openUpload(port: number, declared: number, sent: number): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(`POST /webhooks/upload HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n`);
      socket.write(Buffer.alloc(sent, 0x61), () => resolve(socket));
    });
    socket.on("error", () => {});
  });
}

/** A port free now (bound, then let go), so a client can knock on it before the threads listen. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Posts to `port` again and again (a sender retrying while the gateway starts) until `stop()`. */
function knock(port: number): { stop(): void; answered(): number } {
  let stopped = false;
  let answered = 0;
  const attempt = () => {
    if (stopped) return;
    const socket = connect(port, "127.0.0.1");
    socket.on("connect", () =>
      socket.write("POST /webhooks/open HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"),
    );
    socket.on("data", () => {
      answered += 1;
      socket.destroy();
      setTimeout(attempt, 5);
    });
    socket.on("error", () => {
      socket.destroy();
      setTimeout(attempt, 20);
    });
  };
  attempt();
  return { stop: () => (stopped = true), answered: () => answered };
}

describe("uWS on ingress threads", () => {
  const heads: string[] = [];
  const early: string[] = [];
  let uploaded = 0;
  let started = false;
  let server: Awaited<ReturnType<typeof listenUwsThreads>>;
  let sender: ReturnType<typeof knock>;
  const handler: RequestHandler = (head, body, reply) => {
    if (!started) early.push(head.path);
    heads.push(head.path);
    body.read(4_000_000, () => {
      if (head.path === "/webhooks/upload") uploaded += 1;
      reply(outcome(202, { status: "accepted" }));
    });
  };

  beforeAll(async () => {
    const port = await freePort();
    // A sender posting while the threads start: the first one listens while the second starts.
    sender = knock(port);
    // A grace of an hour: a thread that still counted aborted requests as owed would not end.
    server = await listenUwsThreads(handler, {
      host: "127.0.0.1",
      port,
      threads: 2,
      bodyLimit: 4_000_000,
      stopGraceMs: HOUR,
      // The main thread counts as stuck past 400 ms without a sign of life (2 s in the gateway).
      mainStaleMs: 400,
    });
    started = true;
  });
  afterAll(() => sender.stop());

  it("hand no request to the gateway before every thread listens (one serves while the next starts, before the gateway's start has run on past its listener)", async () => {
    await vi.waitFor(() => expect(sender.answered()).toBeGreaterThan(0), { timeout: 10_000 });
    sender.stop();
    expect(early).toEqual([]);
  });

  it("answer /health at once while the main thread runs, and leave it to the main thread while that does not (a liveness probe sees a stuck gateway, as with workers: 0)", async () => {
    const url = `http://127.0.0.1:${server.port}/health`;
    // 200 is the thread's own answer; this handler (the main thread) would answer 202.
    await vi.waitFor(async () => expect((await fetch(url)).status).toBe(200), { timeout: 10_000 });
    // A beat of the main thread's after that answer (it beats every 100 ms): the probe's look is then the
    // first to find the count changed since the last /health, which must not make a held thread look alive.
    await new Promise((resolve) => setTimeout(resolve, 150));
    // The main thread held (a synchronous child run, as a stuck event loop): a probe meanwhile.
    const probe = spawnSync(
      process.execPath,
      [
        "-e",
        `setTimeout(() => fetch(${JSON.stringify(url)}, { signal: AbortSignal.timeout(400) }).then((r) => process.stdout.write(String(r.status)), () => process.stdout.write("no answer")), 600)`,
      ],
      { encoding: "utf8", timeout: 10_000 },
    );
    expect(probe.stdout).toBe("no answer");
    // Running again, the thread answers at once again.
    await vi.waitFor(async () => expect((await fetch(url)).status).toBe(200), { timeout: 10_000 });
  });

  it("forget clients that disconnect mid-body: the handler's read is never called and a stop owes them nothing", async () => {
    const uploads = await Promise.all(
      Array.from({ length: 8 }, () => openUpload(server.port, 1_048_576, 200_000)),
    );
    await vi.waitFor(() => expect(heads.filter((path) => path === "/webhooks/upload")).toHaveLength(8), {
      timeout: 10_000,
    });
    for (const socket of uploads) socket.destroy();
    server.close();
    await server.ended?.();
    expect(uploaded).toBe(0);
  });
});
