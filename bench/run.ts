/**
 * `npm run bench`: load on loopback (wrk when installed, else autocannon) against the real gateway
 * (accepted, 401 and filter-ignored paths), against a bare uWS handler (the ceiling) and against the
 * floor (bare plus header copy, HMAC check and JSON parse: what any receiver must do). Prints req/s, p50/p99 latency and
 * the server's peak RSS (VmHWM) and RSS at the start and end of each run.
 * BENCH_DURATION (seconds, default 10) and BENCH_CONNECTIONS (default 32) tune the runs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import examples from "@octokit/webhooks-examples";
import autocannon from "autocannon";
import { stringify } from "yaml";
import { runWrk, wrkAvailable } from "./wrk.js";

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECRET = "bench-secret";
/** `BENCH_TOOL=autocannon|wrk`; default wrk when installed (`apt-get install wrk`), pinned apart from the server. */
const TOOL = process.env.BENCH_TOOL ?? (wrkAvailable() ? "wrk" : "autocannon");
const WORK_DIR = mkdtempSync(join(tmpdir(), "svc-bench-wrk-"));

/** A pull_request payload trimmed to about 1 KB. */
function payload(action: string): string {
  const defs = examples as unknown as Array<{ name: string; examples: Array<Record<string, unknown>> }>;
  const pr = defs
    .find((d) => d.name === "pull_request")
    ?.examples.find((e) => e.action === "opened") as Record<string, any>;
  const body = {
    action,
    number: pr.number,
    pull_request: {
      title: pr.pull_request.title,
      body: pr.pull_request.body,
      html_url: pr.pull_request.html_url,
      state: pr.pull_request.state,
      draft: false,
      user: { login: pr.pull_request.user.login, id: pr.pull_request.user.id },
      head: { ref: pr.pull_request.head.ref, sha: pr.pull_request.head.sha },
      base: { ref: pr.pull_request.base.ref, sha: pr.pull_request.base.sha },
    },
    repository: {
      full_name: pr.repository.full_name,
      html_url: pr.repository.html_url,
      default_branch: pr.repository.default_branch,
    },
    sender: { login: pr.sender.login, id: pr.sender.id },
  };
  let text = JSON.stringify(body);
  if (text.length < 1024) text = JSON.stringify({ ...body, padding: "x".repeat(1024 - text.length - 14) });
  return text;
}

async function startServer(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; port: number }> {
  const argv = [process.execPath, "--import", "tsx", join(import.meta.dirname, "server.ts"), ...args];
  // With wrk on CPU 1, the server gets CPU 0 to itself.
  const pinned = TOOL === "wrk" ? ["taskset", "-c", "0", ...argv] : argv;
  const child = spawn(pinned[0] as string, pinned.slice(1), {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...env },
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const port = await new Promise<number>((resolve, reject) => {
    lines.on("line", (line) => {
      if (line.startsWith('{"port"')) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.once("exit", () => reject(new Error("server exited before listening")));
  });
  // Keep reading: a server that logs to stdout (BENCH_LOG_LEVEL=info) must never block on a full pipe.
  return { child, port };
}

async function stopServer(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

function memory(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 };
}

interface Row {
  name: string;
  reqPerSec: number;
  p50: number;
  p99: number;
  statuses: string;
  rssStartMb: number;
  /** RSS a quarter into the run: against the end value it shows whether memory stays flat. */
  rssQuarterMb: number;
  rssEndMb: number;
  peakMb: number;
}

async function load(
  name: string,
  port: number,
  pid: number,
  path: string,
  body: string,
  headers: () => Record<string, string>,
): Promise<Row> {
  const before = memory(pid);
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(memory(pid).rssMb), 1000);
  if (TOOL === "wrk") {
    const { "x-github-delivery": _perRequest, ...fixed } = headers();
    const tag = name.replace(/[^a-z0-9]+/gi, "-");
    const r = await runWrk(WORK_DIR, port, path, body, fixed, CONNECTIONS, DURATION, tag);
    clearInterval(sampler);
    const after = memory(pid);
    return {
      name,
      ...r,
      rssStartMb: Math.round(before.rssMb),
      rssQuarterMb: Math.round(samples[Math.floor(samples.length / 4)] ?? before.rssMb),
      rssEndMb: Math.round(after.rssMb),
      peakMb: Math.round(after.peakMb),
    };
  }
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration: DURATION,
    requests: [
      {
        method: "POST",
        path,
        body,
        setupRequest: (req: Record<string, unknown>) => ({
          ...req,
          headers: { "content-type": "application/json", ...headers() },
        }),
      },
    ],
  });
  clearInterval(sampler);
  const after = memory(pid);
  const quarter = samples[Math.floor(samples.length / 4)] ?? before.rssMb;
  const codes = Object.entries(result.statusCodeStats ?? {})
    .map(([code, s]) => `${code}:${(s as { count: number }).count}`)
    .join(" ");
  return {
    name,
    reqPerSec: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    statuses: codes || `2xx:${result["2xx"]} non2xx:${result.non2xx}`,
    rssStartMb: Math.round(before.rssMb),
    rssQuarterMb: Math.round(quarter),
    rssEndMb: Math.round(after.rssMb),
    peakMb: Math.round(after.peakMb),
  };
}

async function main(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "svc-bench-"));
  writeFileSync(
    join(home, "config.yaml"),
    stringify({
      platforms: {
        webhook: {
          enabled: true,
          host: "127.0.0.1",
          rate_limit: 1_000_000_000,
          routes: {
            pr: {
              secret: SECRET,
              events: ["pull_request"],
              filters: [{ field: "action", in: ["opened", "synchronize", "reopened"] }],
              prompt:
                "Review PR #{number} {pull_request.title} by {pull_request.user.login} in {repository.full_name}",
            },
          },
        },
      },
      agent: { provider: "echo" },
    }),
  );
  const opened = payload("opened");
  const closed = payload("closed");
  const sign = (text: string) => `sha256=${createHmac("sha256", SECRET).update(text).digest("hex")}`;
  let seq = 0;
  const rows: Row[] = [];

  const bare = await startServer(["bare"]);
  try {
    rows.push(
      await load(
        "bare uWS (ceiling)",
        bare.port,
        bare.child.pid as number,
        "/webhooks/pr",
        opened,
        () => ({}),
      ),
    );
  } finally {
    bare.child.kill("SIGTERM");
  }

  // The floor: bare plus the work every receiver must do (headers, HMAC check, JSON parse).
  const floor = await startServer(["floor", SECRET]);
  try {
    const signedOpened = sign(opened);
    rows.push(
      await load(
        "floor: bare + headers + HMAC + JSON.parse",
        floor.port,
        floor.child.pid as number,
        "/webhooks/pr",
        opened,
        () => ({ "x-github-event": "pull_request", "x-hub-signature-256": signedOpened }),
      ),
    );
  } finally {
    floor.child.kill("SIGTERM");
  }

  const gateway = await startServer(["gateway", home]);
  const pid = gateway.child.pid as number;
  try {
    const signedOpened = sign(opened);
    rows.push(
      await load("gateway accepted (202)", gateway.port, pid, "/webhooks/pr", opened, () => ({
        "x-github-event": "pull_request",
        "x-github-delivery": `d-${++seq}`,
        "x-hub-signature-256": signedOpened,
      })),
    );
    rows.push(
      await load("gateway bad signature (401)", gateway.port, pid, "/webhooks/pr", opened, () => ({
        "x-github-event": "pull_request",
        "x-github-delivery": `d-${++seq}`,
        "x-hub-signature-256": `sha256=${"0".repeat(64)}`,
      })),
    );
    const signedClosed = sign(closed);
    rows.push(
      await load("gateway filter-ignored (200)", gateway.port, pid, "/webhooks/pr", closed, () => ({
        "x-github-event": "pull_request",
        "x-github-delivery": `d-${++seq}`,
        "x-hub-signature-256": signedClosed,
      })),
    );
  } finally {
    await stopServer(gateway.child);
  }

  // The same accepted load with the log at INFO, as `svc gateway run` logs by default: one log-target
  // line per run, to the log file and to stdout (here a pipe this process drains).
  const logged = await startServer(["gateway", home], { BENCH_LOG_LEVEL: "info" });
  try {
    const signedOpened = sign(opened);
    rows.push(
      await load(
        "gateway accepted, log at INFO (202)",
        logged.port,
        logged.child.pid as number,
        "/webhooks/pr",
        opened,
        () => ({
          "x-github-event": "pull_request",
          "x-github-delivery": `i-${++seq}`,
          "x-hub-signature-256": signedOpened,
        }),
      ),
    );
  } finally {
    await stopServer(logged.child);
    rmSync(home, { recursive: true, force: true });
  }

  // The machine is shared: measure the ceiling again after the gateway runs and keep the better one.
  const bareAgain = await startServer(["bare"]);
  try {
    const again = await load(
      "bare uWS (ceiling, again)",
      bareAgain.port,
      bareAgain.child.pid as number,
      "/webhooks/pr",
      opened,
      () => ({}),
    );
    rows.push(again);
  } finally {
    bareAgain.child.kill("SIGTERM");
  }

  console.log(
    `\n${TOOL === "wrk" ? "wrk (1 thread on CPU 1, server on CPU 0)" : "autocannon"}: ${CONNECTIONS} connections, ${DURATION} s per run, body ${opened.length} bytes, node ${process.version}\n`,
  );
  console.log("| run | req/s | p50 ms | p99 ms | statuses | RSS start → ¼ → end MB | peak RSS MB |");
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${r.reqPerSec} | ${r.p50} | ${r.p99} | ${r.statuses} | ${r.rssStartMb} → ${r.rssQuarterMb} → ${r.rssEndMb} | ${r.peakMb} |`,
    );
  }
  const ceiling = Math.max(rows[0]?.reqPerSec ?? 1, rows.at(-1)?.reqPerSec ?? 1);
  const share = (name: string) => {
    const row = rows.find((r) => r.name.startsWith(name));
    return `${(((row?.reqPerSec ?? 0) / ceiling) * 100).toFixed(0)}%`;
  };
  console.log(`\naccepted path = ${share("gateway accepted")} of the bare uWS ceiling`);
  console.log(`floor (no receiver logic beyond HMAC + parse) = ${share("floor")} of the ceiling`);
}

await main();
rmSync(WORK_DIR, { recursive: true, force: true });
