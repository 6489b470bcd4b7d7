/**
 * `node --import tsx bench/bundleAb.ts <treeA> <treeB> [rounds] [seconds]`: interleaved A/B of the server CPU
 * per accepted request of `svc gateway run` as users start it, from each tree's bundle (`dist/cli/main.js`),
 * where `bench/cpuAb.ts` runs `bench/server.ts` on the per-file build (which resolves packages such as rxjs
 * from node_modules, not as the bundle holds them). The gateway (bench config, `local` state, echo agent,
 * log at INFO to a pipe this script reads) is pinned to CPU 0, wrk to CPU 1; CPU is the server's user +
 * system time over the wrk run (`/proc/<pid>/stat`) divided by the requests answered. A runs before B in
 * each round: run it both ways round, as the machine drifts within a run.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runPullRequests, writeBenchConfig } from "./benchServer.js";

const [a, b, roundsArg, secondsArg] = process.argv.slice(2);
if (a === undefined || b === undefined) {
  process.stderr.write("usage: bundleAb.ts <treeA> <treeB> [rounds] [seconds]\n");
  process.exit(2);
}
const rounds = Number(roundsArg ?? 5);
const seconds = Number(secondsArg ?? 5);
/** User + system CPU seconds of process `pid`, all its threads. */
const cpu = (pid: number) => {
  const s = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
};
const out: Record<string, number[]> = { A: [], B: [] };
for (let r = 0; r < rounds; r++) {
  for (const [label, tree] of [
    ["A", a],
    ["B", b],
  ] as const) {
    const home = mkdtempSync(join(tmpdir(), "svc-bundle-ab-"));
    writeBenchConfig(home, undefined);
    const child = spawn(
      "taskset",
      ["-c", "0", process.execPath, join(tree, "dist/cli/main.js"), "gateway", "run", "--port", "0"],
      {
        env: { PATH: process.env.PATH ?? "", SVC_HOME: home, HOME: home },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const port = await new Promise<number>((resolve) => {
      let text = "";
      const on = (d: Buffer) => {
        text += d;
        const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(text);
        if (m) resolve(Number(m[1]));
      };
      child.stdout.on("data", on);
      child.stderr.on("data", on);
    });
    const c0 = cpu(child.pid as number);
    const res = await runPullRequests(home, port, "accepted", seconds, `${label}${r}`);
    const c1 = cpu(child.pid as number);
    const reqs = res.reqPerSec * seconds;
    out[label]?.push(((c1 - c0) / reqs) * 1e6);
    console.log(
      label,
      r,
      Math.round(res.reqPerSec),
      "req/s",
      (((c1 - c0) / reqs) * 1e6).toFixed(1),
      "µs/req",
      res.statuses,
    );
    child.kill("SIGTERM");
    await new Promise((r2) => child.once("exit", r2));
    rmSync(home, { recursive: true, force: true });
  }
}
for (const [k, v] of Object.entries(out)) {
  v.sort((x, y) => x - y);
  console.log(k, "median µs/req", v[v.length >> 1]?.toFixed(1), "all", v.map((x) => x.toFixed(1)).join(" "));
}
