/**
 * `node --import tsx bench/rssTimeline.ts [seconds]`: the gateway (`state.backend: local`, echo agent, log
 * at INFO, pinned to CPU 0; `BENCH_STATE=redis` on a private redis-server, as `npm run bench` starts one) under
 * wrk's accepted load (32 connections, unique delivery ids) for 60 s by default. Prints the server's RSS each 5 s, when each journal rotation took place (a new segment number
 * in $SVC_HOME/state), the RSS at 15 s against the peak (the "flat over 60 s" target: peak ≤ 1.1× the value
 * at 15 s), and wrk's req/s and p99. `TREE=<dir>` runs another tree's build instead (as `bench/cpuAb.ts` takes one).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listSegments } from "../src/io/state/journal/segments.js";
import { startTestRedis } from "../test/helpers/redis.js";
import { payload, signatureFor, startServer, stopServer, writeBenchConfig } from "./benchServer.js";
import { runWrk } from "./wrk.js";

const SECONDS = Number(process.argv[2] ?? 60);

const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;

/** The current journal segment's number (0 without a journal: `redis`). */
const segmentNumber = (dir: string) => Math.max(0, ...listSegments(dir));

const home = mkdtempSync(join(tmpdir(), "svc-bench-rss-"));
const redis = process.env.BENCH_STATE === "redis" ? await startTestRedis() : undefined;
writeBenchConfig(home, redis === undefined ? undefined : { backend: "redis", redis_url: redis.url });
const gateway = await startServer(["gateway", home], {
  ...(process.env.TREE ? { tree: process.env.TREE } : {}),
  pinned: true,
  env: { BENCH_LOG_LEVEL: "info" },
});
const pid = gateway.child.pid as number;
const work = mkdtempSync(join(tmpdir(), "svc-bench-rss-wrk-"));
const body = payload("opened");
const started = Date.now();
const samples: { at: number; rss: number }[] = [];
const rotations: number[] = [];
let segment = segmentNumber(join(home, "state"));
const sampler = setInterval(() => {
  const at = (Date.now() - started) / 1000;
  samples.push({ at, rss: rssMb(pid) });
  const now = segmentNumber(join(home, "state"));
  if (now !== segment) rotations.push(at);
  segment = now;
  if (samples.length % 5 === 0) console.log(`${at.toFixed(0)} s: RSS ${samples.at(-1)?.rss.toFixed(0)} MB`);
}, 1000);
const result = await runWrk(
  work,
  gateway.port,
  "/webhooks/pr",
  body,
  { "x-github-event": "pull_request", "x-hub-signature-256": signatureFor(body) },
  32,
  SECONDS,
  "rss",
);
clearInterval(sampler);
await stopServer(gateway.child);
await redis?.stop();
rmSync(home, { recursive: true, force: true });
rmSync(work, { recursive: true, force: true });

const at15 = samples.find((s) => s.at >= 15)?.rss ?? samples.at(-1)?.rss ?? 0;
const peak = Math.max(...samples.map((s) => s.rss));
console.log(
  `accepted, 32 connections, ${SECONDS} s: ${Math.round(result.reqPerSec)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, ${result.statuses}`,
);
console.log(`journal rotations at ${rotations.map((s) => `${s.toFixed(0)} s`).join(", ") || "none"}`);
console.log(`RSS at 15 s ${at15.toFixed(0)} MB, peak ${peak.toFixed(0)} MB (${(peak / at15).toFixed(2)}×)`);
