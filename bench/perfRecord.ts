/**
 * `node --import tsx bench/perfRecord.ts <tree> [accepted|401|ignored] [seconds] [out]`: the gateway of `tree`
 * (`state.backend: local`, echo agent, log at INFO; a directory holding `bench/server.ts` and a compiled `dist/`)
 * pinned to CPU 0 under wrk's load, sampled by `perf record -e cpu-clock -g` (Linux perf, Debian's `linux-perf`; no
 * hardware counters needed) with `--perf-basic-prof`, so JIT-compiled JavaScript, Node's native code, libc and the kernel show
 * in one profile, the kernel's work for the process's system calls and page faults included. Prints the
 * requests answered, the server's CPU per request and, counted apart by `perf stat`, the wake-ups, the context
 * switches and the network and file system calls (`fdatasync` among them) per request (`BENCH_STATE=memory` runs the gateway without the journal), and writes `perf report`'s flat profile (by shared
 * object and symbol, self time) to `<out>.txt` (default `perf-<kind>` in the temporary directory). Where `bench/profile.ts` sees only
 * JavaScript and counts the rest as "outside the samples", this splits that rest; it then prints the request's
 * CPU split into the parts of its work (`bench/perfParts.ts`), to set beside the bound's.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  cpuSeconds,
  requestKind,
  runPullRequests,
  SECRET,
  startServer,
  stopServer,
  writeBenchConfig,
} from "./benchServer.js";
import { perfParts } from "./perfParts.js";

const [treeArg, kindArg, secondsArg, outArg] = process.argv.slice(2);
if (treeArg === undefined) {
  process.stderr.write("usage: perfRecord.ts <tree> [accepted|401|ignored] [seconds] [out]\n");
  process.exit(2);
}
const tree = resolve(treeArg);
const kind = requestKind(kindArg ?? "ignored", "perfRecord.ts");
const seconds = Number(secondsArg ?? 5);
const out = outArg ?? join(tmpdir(), `perf-${kind}`);

const home = mkdtempSync(join(tmpdir(), "svc-perf-"));
const work = mkdtempSync(join(tmpdir(), "svc-perf-wrk-"));
writeBenchConfig(home, undefined);
// BENCH_PERF_SERVER=obligations samples the obligations bound (bench/obligations.ts) of `tree` instead.
const bound = process.env.BENCH_PERF_SERVER === "obligations";
const { child, port } = await startServer(bound ? ["obligations", SECRET, home] : ["gateway", home], {
  tree,
  pinned: true,
  nodeArgs: ["--perf-basic-prof"],
  env: { BENCH_LOG_LEVEL: "info" },
});
const pid = child.pid as number;
try {
  // Warm up (JIT, caches) before anything is counted.
  await runPullRequests(work, port, kind, 2, "warm");
  const perf = spawn("perf", ["record", "-e", "cpu-clock", "-g", "-o", `${out}.data`, "-p", String(pid)], {
    stdio: "ignore",
  });
  // The wake-ups the server's sends cause (wrk asleep in epoll_wait when an answer arrives), the system calls
  // that do the network and file I/O (the journal's syncs among them), and the server's context switches
  // (the thread pool's syncs on the same core), counted apart, per request.
  const counted = [
    "sched:sched_wakeup",
    "syscalls:sys_enter_sendto",
    "syscalls:sys_enter_recvfrom",
    "syscalls:sys_enter_epoll_wait",
    "syscalls:sys_enter_write",
    "syscalls:sys_enter_writev",
    "syscalls:sys_enter_fdatasync",
    "sched:sched_switch",
  ];
  const counts = spawn("perf", ["stat", "-x", ",", "-e", counted.join(","), "-p", String(pid)], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let countText = "";
  counts.stderr?.on("data", (chunk: Buffer) => {
    countText += chunk.toString("utf8");
  });
  const cpuBefore = cpuSeconds(pid);
  const result = await runPullRequests(work, port, kind, seconds, "perf");
  const cpu = cpuSeconds(pid) - cpuBefore;
  perf.kill("SIGINT");
  counts.kill("SIGINT");
  await Promise.all([perf, counts].map((p) => new Promise((done) => p.once("exit", done))));
  const requests = result.reqPerSec * seconds;
  // `perf stat -x ,` lines: count,unit,event,...
  const perRequest = countText
    .split("\n")
    .map((line) => line.split(","))
    .filter((fields) => fields.length > 2 && counted.includes(fields[2] as string))
    .map(
      (fields) =>
        `${(Number(fields[0]) / requests).toFixed(2)} ${(fields[2] as string).replace(/^.*:(sys_enter_)?/, "")}`,
    );
  process.stdout.write(
    `${kind}: ${Math.round(requests)} requests, ${((cpu / requests) * 1e6).toFixed(1)} µs CPU/request (under perf)\nper request: ${perRequest.join(", ")}\n`,
  );
  const report = spawnSync(
    "perf",
    ["report", "-i", `${out}.data`, "--stdio", "--no-children", "--sort", "dso,sym", "-g", "none"],
    { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 },
  );
  writeFileSync(`${out}.txt`, report.stdout);
  process.stdout.write(`flat profile: ${out}.txt\n`);
  const script = spawnSync("perf", ["script", "-i", `${out}.data`, "-F", "ip,sym"], {
    encoding: "utf8",
    maxBuffer: 1024 * 1024 * 1024,
  });
  process.stdout.write(
    "µs per request, by part (each sample counted once, in the first part its stack shows):\n",
  );
  for (const { part, us } of perfParts(script.stdout, (cpu / requests) * 1e6))
    process.stdout.write(`  ${us.toFixed(2).padStart(6)}  ${part}\n`);
} finally {
  await stopServer(child);
  rmSync(home, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
}
