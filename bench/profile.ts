/**
 * `node --import tsx bench/profile.ts [accepted|401|ignored] [seconds]`: the compiled gateway
 * (`state.backend: local` unless BENCH_STATE=memory or redis, echo agent, log at BENCH_LOG_LEVEL, default info) pinned
 * to CPU 0 under `node --cpu-prof`, wrk (1 thread, BENCH_CONNECTIONS connections (default 32), a unique delivery id per request) on CPU 1;
 * then prints the top self-time functions and the inclusive share of each part of the accepted path, counted
 * between the first and the last answer (`send` in the uWS adapter), idle time left out, and the hottest lines of
 * dist/ (V8's per-line sample counts over the whole run). Needs `npm run build`
 * and wrk. BENCH_PROFILE_KEEP=1 keeps the .cpuprofile and prints its path.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestRedis } from "../test/helpers/redis.js";
import {
  cpuSeconds,
  payload,
  signatureFor,
  startServer,
  stopServer,
  writeBenchConfig,
} from "./benchServer.js";
import { type ProfileNode, profileParts } from "./profileParts.js";
import { runWrk } from "./wrk.js";

const kind = process.argv[2] ?? "accepted";
const seconds = Number(process.argv[3] ?? 10);

const home = mkdtempSync(join(tmpdir(), "svc-prof-"));
const profDir = mkdtempSync(join(tmpdir(), "svc-prof-out-"));
// BENCH_STATE=redis: a private redis-server (as `npm run bench` starts one); memory is read by server.ts.
const redis = process.env.BENCH_STATE === "redis" ? await startTestRedis() : undefined;
writeBenchConfig(home, redis === undefined ? undefined : { backend: "redis", redis_url: redis.url });
const { child, port } = await startServer(["gateway", home], {
  pinned: true,
  nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${profDir}`],
  env: { BENCH_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info" },
});
const text = payload(kind === "ignored" ? "closed" : "opened");
const signature = signatureFor(text, kind !== "401");
// The server's user + system CPU (all threads), from /proc: what the samples are compared with.
const cpuBefore = cpuSeconds(child.pid as number);
const result = await runWrk(
  profDir,
  port,
  "/webhooks/pr",
  text,
  { "x-github-event": "pull_request", "x-hub-signature-256": signature },
  Number(process.env.BENCH_CONNECTIONS ?? 32),
  seconds,
  kind,
).catch(async (err: unknown) => {
  await stopServer(child);
  await redis?.stop();
  throw err;
});
const cpuUsed = cpuSeconds(child.pid as number) - cpuBefore;
await stopServer(child);
await redis?.stop();
console.log(JSON.stringify(result));

type Node = ProfileNode;
const file = readdirSync(profDir).find((f) => f.endsWith(".cpuprofile"));
if (file === undefined) throw new Error("no .cpuprofile written");
const prof = JSON.parse(readFileSync(join(profDir, file), "utf8")) as {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
};
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const label = (n: Node) =>
  `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.replace(/^.*\/(dist|node_modules)\//, "$1/")}:${n.callFrame.lineNumber + 1}`;
const isSend = (n: Node) => n.callFrame.functionName === "send" && n.callFrame.url.includes("uws");
let first = -1;
let last = -1;
prof.samples.forEach((id, i) => {
  const n = byId.get(id) as Node;
  let cur: Node | undefined = n;
  while (cur !== undefined) {
    if (isSend(cur)) {
      if (first < 0) first = i;
      last = i;
      break;
    }
    const p = parent.get(cur.id);
    cur = p === undefined ? undefined : byId.get(p);
  }
});
const self = new Map<string, number>();
const incl = new Map<string, number>();
let busy = 0;
for (let i = Math.max(first, 0); i <= last; i++) {
  const n = byId.get(prof.samples[i] as number) as Node;
  const dt = prof.timeDeltas[i + 1] ?? 0;
  if (n.callFrame.functionName === "(idle)") continue;
  busy += dt;
  self.set(label(n), (self.get(label(n)) ?? 0) + dt);
  const seen = new Set<string>();
  let cur: Node | undefined = n;
  while (cur !== undefined) {
    const l = label(cur);
    if (!seen.has(l)) {
      seen.add(l);
      incl.set(l, (incl.get(l) ?? 0) + dt);
    }
    const p = parent.get(cur.id);
    cur = p === undefined ? undefined : byId.get(p);
  }
}
const requests = result.reqPerSec * seconds;
console.log(
  `busy ${(busy / 1e3).toFixed(0)} ms, ~${((busy / requests) | 0).toString()} µs busy per request (approx.)`,
);
// Every busy sample in one part, then the CPU the samples do not show (uWS's native socket work, the
// kernel, the thread pool, the profiler itself): the rows add up to the server's CPU per request.
{
  const jsonNumbers = readFileSync(
    new URL("../dist/streams/jsonNumbers/parse.js", import.meta.url),
    "utf8",
  ).split("\n");
  const parseLine = jsonNumbers.findIndex((l) => l.includes("JSON.parse(text)")) + 1 || undefined;
  const parts = [...profileParts(prof, first, last, parseLine)].sort((a, b) => b[1] - a[1]);
  const perRequest = (us: number) => (us / requests).toFixed(1).padStart(6);
  const cpuUs = cpuUsed * 1e6;
  const floorUs = parts.filter(([p]) => p.floor).reduce((s, [, t]) => s + t, 0);
  console.log(`\n-- by part: µs per request (server CPU ${perRequest(cpuUs)} µs under the profiler) --`);
  for (const [p, t] of parts) console.log(`${perRequest(t)}  ${p.floor ? "floor " : "svc   "} ${p.name}`);
  console.log(
    `${perRequest(Math.max(0, cpuUs - busy))}  mixed  outside the JavaScript samples (uWS native I/O, kernel, thread pool, profiler)`,
  );
  console.log(
    `floor-shaped work in the samples: ${perRequest(floorUs)} µs; svc's own: ${perRequest(busy - floorUs)} µs`,
  );
}
const top = (m: Map<string, number>, n: number) =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((100 * v) / busy).toFixed(1).padStart(5)} %  ${k}`)
    .join("\n");
console.log(`\n-- self --\n${top(self, 45)}`);
console.log(
  `\n-- inclusive (dist/ only) --\n${top(new Map([...incl].filter(([k]) => k.includes("dist/"))), Number(process.env.BENCH_PROFILE_TOP ?? 70))}`,
);
// Which line of a function the samples fell on (V8 records it per call-tree node, over the whole run):
// what showed the stages' `{ ...ctx, part }` spreads costing as much as JSON.parse.
const lines = new Map<string, number>();
const ownDist = new URL("../dist/", import.meta.url).href;
for (const n of prof.nodes as (Node & { positionTicks?: { line: number; ticks: number }[] })[]) {
  if (!n.callFrame.url.startsWith(ownDist)) continue;
  const file = `dist/${n.callFrame.url.slice(ownDist.length)}`;
  for (const t of n.positionTicks ?? [])
    lines.set(`${file}:${t.line}`, (lines.get(`${file}:${t.line}`) ?? 0) + t.ticks);
}
const sources = new Map<string, string[]>();
const sourceLine = (at: string) => {
  const [file, line] = [at.slice(0, at.lastIndexOf(":")), Number(at.slice(at.lastIndexOf(":") + 1))];
  if (!sources.has(file))
    sources.set(file, readFileSync(new URL(`../${file}`, import.meta.url), "utf8").split("\n"));
  return (sources.get(file)?.[line - 1] ?? "").trim().slice(0, 100);
};
console.log(
  `\n-- hottest lines in dist/ (samples, whole run) --\n${[...lines]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([at, ticks]) => `${String(ticks).padStart(6)}  ${at}  ${sourceLine(at)}`)
    .join("\n")}`,
);
if (process.env.BENCH_PROFILE_KEEP === "1") console.log(`profile: ${join(profDir, file)}`);
else rmSync(profDir, { recursive: true, force: true });
rmSync(home, { recursive: true, force: true });
