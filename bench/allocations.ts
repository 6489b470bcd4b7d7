/**
 * `node --import tsx bench/allocations.ts [accepted|401|ignored] [seconds]`: what each request allocates,
 * by the function that allocates it. The compiled gateway (`state.backend: local`, echo agent, log at
 * INFO) pinned to CPU 0 with `bench/allocationSampler.mjs` preloaded; wrk on CPU 1 warms it for 2 s (ALLOC_WARMUP
 * seconds: 10 or more lets the seen-ids cache fill first, so what it keeps per request is its steady share), then
 * V8's sampling heap profiler (every ~2 KB, freed objects included) runs over `seconds` (default 4) of
 * load. Prints the sampled bytes per request, the top allocating functions and the top stacks (innermost
 * last). Sampled, so each figure is an estimate within a few percent. With ALLOC_LIVE=1 only the objects
 * still alive when sampling stops are counted: what the requests keep (bytes per request of the sampled
 * run). Needs `npm run build` and wrk.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { payload, signatureFor, startServer, stopServer, writeBenchConfig } from "./benchServer.js";
import { runWrk } from "./wrk.js";

const kind = process.argv[2] ?? "accepted";
const seconds = Number(process.argv[3] ?? 4);
const home = mkdtempSync(join(tmpdir(), "svc-alloc-"));
const out = join(home, "allocations.json");
writeBenchConfig(home, undefined);
const { child, port } = await startServer(["gateway", home], {
  pinned: true,
  nodeArgs: ["--import", join(import.meta.dirname, "allocationSampler.mjs")],
  env: { BENCH_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info", ALLOC_PROFILE_OUT: out },
});
const text = payload(kind === "ignored" ? "closed" : "opened");
const headers = {
  "x-github-event": "pull_request",
  "x-hub-signature-256": signatureFor(text, kind !== "401"),
};
await runWrk(home, port, "/webhooks/pr", text, headers, 32, Number(process.env.ALLOC_WARMUP ?? 2), kind);
child.kill("SIGUSR2");
await sleep(200);
const result = await runWrk(home, port, "/webhooks/pr", text, headers, 32, seconds, kind);
child.kill("SIGUSR2");
for (let i = 0; i < 100 && !existsSync(out); i++) await sleep(100);
await sleep(300); // the profile is written in one call: wait for the file to be complete
await stopServer(child);

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children: Node[];
}
const profile = JSON.parse(readFileSync(out, "utf8")) as {
  head: Node;
  samples: Array<{ size: number; nodeId: number }>;
};
rmSync(home, { recursive: true, force: true });
const frames = new Map<number, { site: string; stack: string }>();
const visit = (node: Node, stack: readonly string[]) => {
  const { functionName, url, lineNumber } = node.callFrame;
  const site = `${functionName || "(anon)"} ${url.replace(/.*\/(dist|node_modules)\//, "$1/")}:${lineNumber + 1}`;
  const path = [...stack, site];
  frames.set(node.id, { site, stack: path.slice(-4).join(" < ") });
  for (const child of node.children) visit(child, path);
};
visit(profile.head, []);
const bySite = new Map<string, number>();
const byStack = new Map<string, number>();
let total = 0;
for (const sample of profile.samples) {
  const frame = frames.get(sample.nodeId);
  if (frame === undefined) continue;
  total += sample.size;
  bySite.set(frame.site, (bySite.get(frame.site) ?? 0) + sample.size);
  byStack.set(frame.stack, (byStack.get(frame.stack) ?? 0) + sample.size);
}
const requests = result.reqPerSec * seconds;
const top = (counts: Map<string, number>) =>
  [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([name, bytes]) => `${(bytes / requests).toFixed(0).padStart(7)}  ${name}`)
    .join("\n");
console.log(JSON.stringify(result));
const what = process.env.ALLOC_LIVE === "1" ? "still alive at the end" : "allocated";
console.log(`~${(total / requests).toFixed(0)} bytes ${what} per request (sampled)\n`);
console.log(`-- bytes per request, by allocating function --\n${top(bySite)}\n`);
console.log(`-- bytes per request, by stack (innermost last) --\n${top(byStack)}`);
