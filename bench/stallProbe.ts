/**
 * `node --import tsx bench/stallProbe.ts [windows]`: where a long run's slow answers come from. The compiled
 * gateway (`state.backend: local` unless BENCH_STATE=memory, echo agent, log at INFO, pinned to CPU 0) takes
 * wrk's accepted load (32 connections, unique delivery ids) in `windows` runs of 5 s (8 by default) back to back,
 * while this process posts one more signed event every 5 ms and times its answer. Prints each window's req/s
 * and p99, every probe answered in more than 15 ms and each journal rotation, all in seconds since the
 * gateway started, and the kernel's `vm.dirty_expire_centisecs` (the age at which written file pages are
 * written back to the disk whatever the gateway does). Needs `npm run build` and wrk.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listSegments } from "../src/io/state/journal/segments.js";
import { payload, signatureFor, startServer, stopServer, writeBenchConfig } from "./benchServer.js";
import { runWrk } from "./wrk.js";

const WINDOWS = Number(process.argv[2] ?? 8);
const WINDOW_S = 5;
const PROBE_EVERY_MS = 5;
const SLOW_MS = 15;

/** The current journal segment's number (0 without a journal: `redis`). */
const segmentNumber = (dir: string) => Math.max(0, ...listSegments(dir));

const home = mkdtempSync(join(tmpdir(), "svc-bench-stall-"));
const work = mkdtempSync(join(tmpdir(), "svc-bench-stall-wrk-"));
writeBenchConfig(home, undefined);
const started = performance.now();
const gateway = await startServer(["gateway", home], { pinned: true, env: { BENCH_LOG_LEVEL: "info" } });
const since = () => (performance.now() - started) / 1000;
const body = payload("opened");
const headers = { "x-github-event": "pull_request", "x-hub-signature-256": signatureFor(body) };

const events: { at: number; text: string }[] = [];
let segment = segmentNumber(join(home, "state"));
const rotations = setInterval(() => {
  const now = segmentNumber(join(home, "state"));
  if (now !== segment) events.push({ at: since(), text: `journal rotation (segment ${now})` });
  segment = now;
}, 100);

let probing = true;
const probes = (async () => {
  for (let n = 0; probing; n++) {
    const sent = performance.now();
    try {
      const res = await fetch(`http://127.0.0.1:${gateway.port}/webhooks/pr`, {
        method: "POST",
        body,
        headers: { ...headers, "content-type": "application/json", "x-github-delivery": `probe-${n}` },
      });
      await res.arrayBuffer();
    } catch {
      // counted by its time all the same
    }
    const ms = performance.now() - sent;
    if (ms > SLOW_MS) events.push({ at: since(), text: `probe answered in ${ms.toFixed(1)} ms` });
    await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
  }
})();

for (let w = 0; w < WINDOWS; w++) {
  const from = since();
  const r = await runWrk(work, gateway.port, "/webhooks/pr", body, headers, 32, WINDOW_S, `w${w}`);
  console.log(
    `window ${w} (${from.toFixed(1)}–${since().toFixed(1)} s): ${Math.round(r.reqPerSec)} req/s, p99 ${r.p99} ms`,
  );
}
probing = false;
await probes;
clearInterval(rotations);
await stopServer(gateway.child);
rmSync(home, { recursive: true, force: true });
rmSync(work, { recursive: true, force: true });

for (const { at, text } of events.sort((a, b) => a.at - b.at)) console.log(`${at.toFixed(2)} s: ${text}`);
const expire = Number(readFileSync("/proc/sys/vm/dirty_expire_centisecs", "utf8")) / 100;
console.log(`vm.dirty_expire_centisecs: written pages go to the disk once ${expire} s old`);
