import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { retryWhilePortTaken } from "./http.js";

/**
 * A throwaway `redis-server` of the test's own: a free port on 127.0.0.1, a temp dir, no persistence.
 * `stop()` kills it (the port is kept, so `start()` brings the same server address back: outage tests).
 */
export interface TestRedis {
  readonly port: number;
  readonly url: string;
  /** With `tls`: the same server's TLS port, as `rediss://localhost:<port>/0`. */
  readonly tlsUrl?: string;
  /** With `unixSocket`: the same server's socket, as `redis://localhost/0?path=<dir>/redis.sock`. */
  readonly socketUrl?: string;
  /** Starts the server again on the same port (after `stop`). */
  start(): Promise<void>;
  /** Stops the server (SIGKILL: an outage, not a shutdown) and waits until it has exited. */
  stop(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open and nothing is answered. */
  freeze(): void;
  /** Lets a frozen server go on (SIGCONT). */
  thaw(): void;
  /** The running server's pid (undefined while stopped). */
  pid(): number | undefined;
  /** Stops it and removes its dir. */
  cleanup(): Promise<void>;
}

const REDIS_SERVER = process.env.SVC_TEST_REDIS_SERVER ?? "redis-server";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** One PING over a raw socket; true on `+PONG`. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let answer = "";
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.on("error", () => done(false));
    socket.on("data", (chunk) => {
      answer += chunk.toString();
      if (answer.includes("\r\n")) done(answer.startsWith("+PONG"));
    });
    socket.connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
  });
}

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`redis-server: ${what} within ${timeoutMs} ms`);
}

/**
 * Starts a private redis-server; use from beforeAll, and `cleanup()` in afterAll. `persist` turns on the
 * append-only file (fsync always), so what Redis acknowledged survives `stop()` + `start()` (outage tests).
 */
export async function startTestRedis(
  options: {
    persist?: boolean;
    tls?: { cert: string; key: string; clientCa?: string };
    /** Also listen on a unix socket in the server's dir (`socketUrl`). */
    unixSocket?: boolean;
    /** More redis-server arguments (`["--rename-command", "INFO", ""]`). */
    args?: readonly string[];
    /** Runs a Redis Sentinel instead, watching the Redis on this port (as its one primary, `primary`). */
    sentinelOf?: number;
  } = {},
): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), "svc-redis-"));
  let port = await freePort();
  let tlsPort = options.tls === undefined ? undefined : await freePort();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let output = "";

  const sentinelConf = join(dir, "sentinel.conf");
  if (options.sentinelOf !== undefined)
    writeFileSync(sentinelConf, `sentinel monitor primary 127.0.0.1 ${options.sentinelOf} 1\n`);

  async function start(): Promise<void> {
    if (child !== undefined) return;
    const proc = spawn(
      REDIS_SERVER,
      [
        ...(options.sentinelOf === undefined ? [] : [sentinelConf, "--sentinel"]),
        ...["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--dir", dir],
        ...(options.args ?? []),
        ...(options.unixSocket === true
          ? ["--unixsocket", join(dir, "redis.sock"), "--unixsocketperm", "700"]
          : []),
        ...(options.persist === true
          ? ["--appendonly", "yes", "--appendfsync", "always"]
          : ["--appendonly", "no"]),
        ...(options.tls === undefined
          ? []
          : [
              ...["--tls-port", String(tlsPort), "--tls-cert-file", options.tls.cert],
              ...["--tls-key-file", options.tls.key],
              // With a client CA, Redis's default: every client must present a certificate it issued.
              ...(options.tls.clientCa === undefined
                ? ["--tls-auth-clients", "no"]
                : ["--tls-ca-cert-file", options.tls.clientCa, "--tls-auth-clients", "yes"]),
            ]),
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    // Its log (stdout) says why a start failed, in its warnings (`#`): "… bind: Address already in use".
    let logged = 0;
    proc.stdout?.on("data", (chunk: Buffer) => {
      if (logged < 65_536)
        for (const line of chunk.toString().split("\n")) if (/ # /.test(line)) output += `${line}\n`;
      logged += chunk.length;
    });
    proc.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child = proc;
    exited = new Promise((resolve) => proc.once("exit", () => resolve()));
    let failed: Error | undefined;
    proc.once("error", (err) => {
      failed = err;
    });
    void exited.then(() => {
      if (child === proc) child = undefined;
    });
    await waitUntil(async () => {
      if (failed !== undefined) throw new Error(`cannot start ${REDIS_SERVER}: ${failed.message}`);
      if (child !== proc) throw new Error(`redis-server exited at start: ${output.trim()}`);
      return ping(port);
    }, `no PONG on port ${port}`);
  }

  async function stop(): Promise<void> {
    const proc = child;
    if (proc === undefined) return;
    proc.kill("SIGKILL");
    await exited;
    child = undefined;
  }

  // The ports were picked and let go: another socket can take one before redis-server binds it (its error
  // then quotes "Address already in use"). Pick again.
  let picked = true;
  await retryWhilePortTaken(async () => {
    if (!picked) {
      output = "";
      port = await freePort();
      if (tlsPort !== undefined) tlsPort = await freePort();
    }
    picked = false;
    await start();
  });
  return {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    ...(tlsPort === undefined ? {} : { tlsUrl: `rediss://localhost:${tlsPort}/0` }),
    ...(options.unixSocket === true
      ? { socketUrl: `redis://localhost/0?path=${join(dir, "redis.sock")}` }
      : {}),
    start,
    stop,
    freeze: () => child?.kill("SIGSTOP"),
    thaw: () => child?.kill("SIGCONT"),
    pid: () => child?.pid,
    async cleanup() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
