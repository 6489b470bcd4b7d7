import { execFileSync, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** Whether `wrk` (C, one thread pinned to one core) can drive the load instead of autocannon. */
export function wrkAvailable(): boolean {
  try {
    execFileSync("wrk", ["--version"], { stdio: "ignore" });
    return true;
  } catch (err) {
    // `wrk --version` exits 1 after printing its version; only a missing binary is "not available".
    return (err as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

export interface WrkResult {
  reqPerSec: number;
  p50: number;
  p99: number;
  statuses: string;
}

/** With `BENCH_LATENCY_SPREAD=1`: Lua lines for wrk's `done` that print the latency's spread to stderr. */
const latencySpread = () =>
  process.env.BENCH_LATENCY_SPREAD === "1"
    ? `  for _, p in ipairs({50, 75, 90, 95, 98, 99, 99.5, 99.9}) do
    io.stderr:write(string.format("p%s %.2f ms  ", p, latency:percentile(p) / 1000))
  end
  io.stderr:write(string.format("max %.2f ms\\n", latency.max / 1000))
`
    : "";

const lua = (s: string) => JSON.stringify(s); // a JSON string literal is a valid Lua string literal here

/**
 * Runs wrk with one thread on CPU 1 (the server is pinned to CPU 0) so the load generator does not
 * compete with the server. Each request carries a fresh delivery id (`<tag>-<thread>-<n>`); the body and
 * its signature are fixed, since the signature covers the body only. `BENCH_LATENCY_SPREAD=1` also prints
 * the latency's percentiles from p50 to p99.9 and its maximum to stderr.
 */
export function runWrk(
  dir: string,
  port: number,
  path: string,
  body: string,
  headers: Readonly<Record<string, string>>,
  connections: number,
  seconds: number,
  tag: string,
): Promise<WrkResult> {
  if (!wrkAvailable()) return Promise.reject(new Error("wrk is not installed: apt-get install wrk"));
  const script = join(dir, `${tag}.lua`);
  writeFileSync(
    script,
    `wrk.method = "POST"
wrk.body = ${lua(body)}
wrk.headers["content-type"] = "application/json"
${Object.entries(headers)
  .map(([k, v]) => `wrk.headers[${lua(k)}] = ${lua(v)}`)
  .join("\n")}
local counter = 1
function setup(thread) thread:set("tid", counter); counter = counter + 1 end
local n = 0
function request()
  n = n + 1
  wrk.headers["x-github-delivery"] = ${lua(tag)} .. "-" .. tostring(tid) .. "-" .. n
  return wrk.format(nil, ${lua(path)})
end
function done(summary, latency, requests)
${latencySpread()}  io.write(string.format('{"rps":%.1f,"p50":%.3f,"p99":%.3f,"bad":%d,"errors":%d}\\n',
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
`,
  );
  return new Promise((resolve, reject) => {
    const child = spawn(
      "taskset",
      [
        "-c",
        "1",
        "wrk",
        "-t1",
        `-c${connections}`,
        `-d${seconds}s`,
        "-s",
        script,
        `http://127.0.0.1:${port}`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("error", reject);
    child.on("exit", () => {
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line === undefined) return reject(new Error(`wrk printed no summary:\n${out}`));
      const r = JSON.parse(line) as { rps: number; p50: number; p99: number; bad: number; errors: number };
      resolve({
        reqPerSec: Math.round(r.rps),
        p50: r.p50,
        p99: r.p99,
        statuses: `4xx/5xx:${r.bad} socket errors:${r.errors}`,
      });
    });
  });
}
