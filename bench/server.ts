/**
 * One server for the load test, in its own process so its memory can be read from /proc:
 *   node --import tsx bench/server.ts gateway <svc-home>   the real gateway (echo agent, log delivery at WARN)
 *   node --import tsx bench/server.ts bare                  a bare uWS handler that reads the body and answers 202
 *   node --import tsx bench/server.ts floor <secret>        bare, plus the work no receiver can skip: copy the
 *                                                           headers, check X-Hub-Signature-256, parse the JSON body
 *   node --import tsx bench/server.ts obligations <secret> <dir>
 *                                                           the floor plus only what svc promises per request,
 *                                                           hand-written (`bench/obligations.ts`)
 * Prints `{"port": N}` on stdout once listening; exits on SIGTERM.
 */

import uWS from "uWebSockets.js";
import { createHmac, timingSafeEqual } from "node:crypto";
import { join } from "node:path";
import { startObligations } from "./obligations.js";

/**
 * The gateway as `svc` runs it: the compiled build in dist/ (`npm run bench` builds it first), not tsx's
 * on-the-fly transform of src/, which adds its own per-call helpers (measured ~10 % slower).
 */
const dist = (path: string) => new URL(`../dist/${path}`, import.meta.url).href;
const { startGateway } = (await import(dist("gateway/index.js"))) as typeof import("../src/gateway/index.js");
const { createLogger } = (await import(dist("io/log.js"))) as typeof import("../src/io/log.js");
const { boundHeapGrowth } = (await import(
  dist("cli/gatewayHeap.js")
)) as typeof import("../src/cli/gatewayHeap.js");

const [mode, arg] = process.argv.slice(2);

/** `floor` mode: what a minimal JavaScript receiver must do per request besides reading the body. */
function mandatoryWork(headers: Record<string, string>, body: Buffer, secret: string): number {
  const sent = Buffer.from((headers["x-hub-signature-256"] ?? "").slice("sha256=".length), "hex");
  const expected = createHmac("sha256", secret).update(body).digest();
  if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) return 401;
  try {
    const payload: unknown = JSON.parse(body.toString("utf8"));
    return typeof payload === "object" && payload !== null ? 202 : 400;
  } catch {
    return 400;
  }
}

if (mode === "bare" || (mode === "floor" && arg !== undefined)) {
  const floorSecret = mode === "floor" ? arg : undefined;
  const app = uWS.App();
  app.post("/*", (res, req) => {
    const headers: Record<string, string> = {};
    if (floorSecret !== undefined) {
      req.forEach((key, value) => {
        headers[key] = value;
      });
    }
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    const chunks: Buffer[] = [];
    res.onData((chunk, isLast) => {
      chunks.push(Buffer.from(Buffer.from(chunk)));
      if (!isLast || aborted) return;
      const body = Buffer.concat(chunks);
      const status = floorSecret === undefined ? 202 : mandatoryWork(headers, body, floorSecret);
      res.cork(() => {
        res
          .writeStatus(status === 202 ? "202 Accepted" : `${status} Rejected`)
          .writeHeader("Content-Type", "application/json")
          .end('{"status":"accepted"}');
      });
    });
  });
  app.listen("127.0.0.1", 0, (socket) => {
    if (!socket) throw new Error(`${mode} server cannot listen`);
    process.stdout.write(`${JSON.stringify({ port: uWS.us_socket_local_port(socket) })}\n`);
  });
  process.on("SIGTERM", () => process.exit(0));
} else if (mode === "obligations" && arg !== undefined && process.argv[4] !== undefined) {
  startObligations(arg, process.argv[4], (port) => process.stdout.write(`${JSON.stringify({ port })}\n`));
  process.on("SIGTERM", () => process.exit(0));
} else if (mode === "gateway" && arg !== undefined) {
  const home = arg;
  // As `svc gateway run` does before it starts the gateway.
  boundHeapGrowth();
  // `npm run bench` sets BENCH_LOG_LEVEL=info (as `svc gateway run` logs: the log target writes one line
  // per run to the log file and to stdout, here a pipe the bench drains); WARN when run alone.
  const level = process.env.BENCH_LOG_LEVEL ?? "warn";
  const logger = createLogger({
    file: join(home, "logs", "gateway.log"),
    stdout: level !== "warn",
    level,
    buffered: true,
  });
  // BENCH_STATE=memory: the accepted path without the journal (what a 202 meant before it).
  const memory =
    process.env.BENCH_STATE === "memory"
      ? {
          stateStore: (
            (await import(dist("state/memoryStore.js"))) as typeof import("../src/state/memoryStore.js")
          ).memoryStateStore(),
        }
      : {};
  const gateway = await startGateway({
    home,
    port: 0,
    logger,
    env: { PATH: process.env.PATH ?? "" },
    ...memory,
  });
  process.stdout.write(`${JSON.stringify({ port: gateway.port })}\n`);
  process.on("SIGTERM", () => {
    void gateway.stop().finally(() => process.exit(0));
  });
} else {
  process.stderr.write(
    "usage: server.ts bare | floor <secret> | obligations <secret> <dir> | gateway <svc-home>\n",
  );
  process.exit(2);
}
