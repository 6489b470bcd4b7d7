/**
 * `npm run bench:journal`: the local state journal (docs/durability.md) on its own and under the gateway.
 *   1. group commit: records/s and records per fdatasync with 1, 16 and 256 concurrent writers, each
 *      appending a 1 KB record and waiting for it to be durable, then appending the next;
 *   2. journal bytes per accepted event (its run accepted + finished records, for a ~1 KB payload);
 *   3. recovery: opening a journal that holds 100,000 accepted, unfinished runs;
 *   4. rotation under load: 64 writers accepting and finishing runs as fast as the journal makes them
 *      durable, with 100,000 idempotency keys live (each snapshot restates them) and 16 MB segments, for
 *      BENCH_JOURNAL_ROTATION_SECONDS (default 10): the wait for `durable()` and the event loop's delay;
 *   5. the real gateway (in this process, echo agent, log delivery at WARN) under autocannon for
 *      BENCH_JOURNAL_LOAD_SECONDS (default 60; 0 skips it), sampling the size of $SVC_HOME/state.
 * BENCH_JOURNAL_SECONDS (default 3) is the length of each group-commit run.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { type JournalFs, nodeJournalFs } from "../src/io/state/journal/fsFacade.js";
import { Journal } from "../src/io/state/journal/journal.js";
import { encodeRecord } from "../src/io/state/journal/records.js";
import type { PendingRun } from "../src/io/stores/pendingRuns.js";
import { stateDir } from "../src/state/gatewayState.js";
import { LocalStateStore } from "../src/state/localStore.js";
import { memoryStateStore } from "../src/state/memoryStore.js";
import { loadEchoGateway, startEchoGateway } from "./echoGateway.js";

const SECONDS = Number(process.env.BENCH_JOURNAL_SECONDS ?? 3);
const LOAD_SECONDS = Number(process.env.BENCH_JOURNAL_LOAD_SECONDS ?? 60);
const SECRET = "bench-secret";

const temp = () => mkdtempSync(join(tmpdir(), "svc-bench-journal-"));

function dirBytes(dir: string): number {
  let total = 0;
  try {
    for (const name of readdirSync(dir)) total += statSync(join(dir, name)).size;
  } catch {
    // Not there yet.
  }
  return total;
}

async function groupCommit(writers: number): Promise<string> {
  const dir = temp();
  let syncs = 0;
  const fs: JournalFs = {
    ...nodeJournalFs,
    fdatasync: (fd) => {
      syncs += 1;
      return nodeJournalFs.fdatasync(fd);
    },
  };
  const journal = new Journal(
    { dir, fs },
    () => {},
    () => [],
  );
  const record = {
    t: "s",
    k: "pr:00000000-0000-0000-0000-000000000000",
    at: Date.now(),
    pad: "x".repeat(960),
  };
  let records = 0;
  const end = Date.now() + SECONDS * 1000;
  const writer = async () => {
    while (Date.now() < end) {
      journal.append(record);
      await journal.durable();
      records += 1;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: writers }, writer));
  const elapsed = (performance.now() - started) / 1000;
  await journal.close();
  rmSync(dir, { recursive: true, force: true });
  return `| ${writers} | ${Math.round(records / elapsed).toLocaleString("en")} | ${Math.round(syncs / elapsed).toLocaleString("en")} | ${(records / Math.max(1, syncs)).toFixed(1)} |`;
}

const prompt =
  "Review PR #1347 Update the README with badges by octocat in Codertocat/Hello-World: " + "x".repeat(400);
const pendingRun = (i: number): PendingRun => ({
  profile: "default",
  routeName: "pr",
  event: "pull_request",
  deliveryId: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  prompt,
  extra: {},
  receivedAt: Date.now(),
});

function bytesPerEvent(): string {
  const run = pendingRun(1);
  const accepted = encodeRecord({ t: "a", run, at: Date.now() }).length;
  const finished = encodeRecord({ t: "f", k: `pr:${run.deliveryId}` }).length;
  return `accepted record ${accepted} B + finished record ${finished} B = ${accepted + finished} B per event (prompt ${prompt.length} B)`;
}

async function recovery(): Promise<string> {
  const dir = temp();
  const writer = new LocalStateStore({ dir, now: Date.now });
  for (let i = 0; i < 100_000; i++) writer.runAccepted(pendingRun(i), Date.now());
  await writer.durable();
  await writer.close();
  const bytes = dirBytes(dir);
  const started = performance.now();
  const reader = new LocalStateStore({ dir, now: Date.now });
  const recovered = reader.recover();
  const ms = performance.now() - started;
  await reader.close();
  rmSync(dir, { recursive: true, force: true });
  return `${recovered.runs.length.toLocaleString("en")} pending runs (${(bytes / 1e6).toFixed(1)} MB of journal) replayed and re-snapshotted in ${Math.round(ms)} ms`;
}

const ROTATION_SECONDS = Number(process.env.BENCH_JOURNAL_ROTATION_SECONDS ?? 10);

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

async function rotationUnderLoad(): Promise<string> {
  const dir = temp();
  const store = new LocalStateStore({
    dir,
    now: Date.now,
    maxSegmentBytes: Number(process.env.BENCH_SEG ?? 16 * 1024 * 1024),
  });
  for (let i = 0; i < 100_000; i++) store.remember(`pr:${String(i).padStart(36, "0")}`, Date.now());
  await store.durable();
  const firstSegment = store.journal.currentSegment().n;
  const waits: number[] = [];
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  let next = 0;
  const end = Date.now() + ROTATION_SECONDS * 1000;
  const writer = async () => {
    while (Date.now() < end) {
      const run = pendingRun(next++);
      const started = performance.now();
      store.runAccepted(run, Date.now());
      await store.durable();
      waits.push(performance.now() - started);
      store.runFinished(run.routeName, run.deliveryId);
    }
  };
  await Promise.all(Array.from({ length: 64 }, writer));
  delay.disable();
  const rotations = store.journal.currentSegment().n - firstSegment;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  waits.sort((a, b) => a - b);
  const ms = (v: number) => v.toFixed(1);
  return `rotation under load: ${waits.length.toLocaleString("en")} events in ${ROTATION_SECONDS} s, ${rotations} rotations; wait for durable p50 ${ms(quantile(waits, 0.5))} ms, p99 ${ms(quantile(waits, 0.99))} ms, max ${ms(waits.at(-1) ?? 0)} ms; event-loop delay p99 ${ms(delay.percentile(99) / 1e6)} ms, max ${ms(delay.max / 1e6)} ms`;
}

async function fullLoad(memory = false): Promise<string> {
  const home = temp();
  const gateway = await startEchoGateway(home, SECRET, memory ? { stateStore: memoryStateStore() } : {});
  let max = 0;
  const sampler = setInterval(() => {
    max = Math.max(max, dirBytes(stateDir(home)));
  }, 250);
  const result = await loadEchoGateway(gateway.port, SECRET, LOAD_SECONDS);
  clearInterval(sampler);
  const end = dirBytes(stateDir(home));
  await gateway.stop();
  rmSync(home, { recursive: true, force: true });
  const total = result["2xx"] + result.non2xx;
  return `${memory ? "memory" : "local"}: ${LOAD_SECONDS} s, 32 connections: ${total.toLocaleString("en")} requests (${Math.round(result.requests.average).toLocaleString("en")} req/s, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}); $SVC_HOME/state peaked at ${(max / 1e6).toFixed(1)} MB, ${(end / 1e6).toFixed(1)} MB at the end`;
}

const only = process.env.BENCH_JOURNAL_ONLY;
if (only === "rotation") {
  console.log(await rotationUnderLoad());
  process.exit(0);
}
if (only === "load") {
  console.log(await fullLoad());
  console.log(await fullLoad(true));
  process.exit(0);
}
console.log("| writers | records/s | fdatasync/s | records per sync |");
console.log("|---|---|---|---|");
for (const writers of [1, 16, 256]) console.log(await groupCommit(writers));
console.log(`\n${bytesPerEvent()}`);
console.log(await recovery());
if (ROTATION_SECONDS > 0) console.log(await rotationUnderLoad());
if (LOAD_SECONDS > 0) {
  console.log(await fullLoad());
  console.log(await fullLoad(true));
}
