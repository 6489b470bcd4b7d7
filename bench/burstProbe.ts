// Burst probe ("do the counters agree", docs/operations.md, docs/durability.md). Not part of the suite; needs
// `node scripts/build.mjs` first.
//   node --import tsx bench/burstProbe.ts [--seed N] [--rounds N] [--kill | --term] [--backend local|redis]
//                                         [--workers N] [--http-server node] [--keep]
// Each round starts `svc gateway run` on one home and sends a burst of mixed signed traffic over keep-alive
// connections and one connection per request: unique ids, the same id twice at once (agent, coalescing and
// deliver_only routes) and again later, bad signatures, events ignored by a filter and by a route's events, a
// route driven past rate_limit, coalescing keys with events across window boundaries, direct deliveries to a
// fake Telegram (one route's first message per event refused, slowly: its duplicate waits and gets 502 too;
// retried later), oversized bodies and bodies trickled in. Without --kill/--term it then checks /metrics
// against the answers (svc_webhook_requests_total and svc_webhook_events_total per route, status and outcome,
// exactly; runs and log delivery attempts against the runs made) and stops the gateway; with --kill it
// SIGKILLs it mid-burst (--term: SIGTERM). The last start retries accepted, coalesced and delivered ids
// (duplicates), redelivers a few ids with `svc webhook redeliver`, lets everything settle and checks: every
// 202 ran (exactly once without --kill), each coalescing key's runs cover exactly its events answered 202,
// every `200 delivered` reached the platform, one of each concurrent pair was answered duplicate, nothing
// refused ran, and every answered request has its row in `svc webhook deliveries --json`.
import { type ChildProcess, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { stringify } from "yaml";
import { startFakeTelegram } from "../test/fakes/telegram.js";
import { startTestRedis, type TestRedis } from "../test/helpers/redis.js";
import { optionOf, problemList, seededRandom, sleep } from "./probeKit.js";

const ROOT = join(import.meta.dirname, "..");
const args = process.argv.slice(2);
const opt = optionOf(args);
const BACKEND = opt("backend", "local");
const ROUNDS = Number(opt("rounds", "3"));
const KILL = args.includes("--kill");
/** SIGTERM mid-burst instead of SIGKILL: a graceful stop, so every 202 runs exactly once. */
const TERM = args.includes("--term");
const WORKERS = Number(opt("workers", "0"));
const HTTP_SERVER = opt("http-server", "uws");
const SEED = Number(opt("seed", String(Date.now() % 100000))) >>> 0;
const { rnd, pick } = seededRandom(SEED);
const SECRET = "burst-secret";
const RATE = 150;
const { problems, problem } = problemList();

const home = mkdtempSync("/tmp/burst-home-");
const started: ChildProcess[] = [];

function config(telegramUrl: string, redis?: TestRedis) {
  return stringify({
    ...(redis ? { state: { backend: "redis", redis_url: redis.url } } : {}),
    gateway: { drain_timeout_seconds: TERM ? 60 : 5 },
    agent: {
      provider: "command",
      command: [
        "sh",
        "-c",
        `p="$(tr '\\n' ' ')"; printf "%s|%s|%s|%s\\n" "$SVC_DELIVERY_ID" "$SVC_ROUTE" "$(date +%s%3N)" "$p" >> "$0/runs.log"`,
        home,
      ],
      max_concurrent_runs: 4,
    },
    platforms: {
      telegram: { enabled: true, token: "123:abc", base_url: telegramUrl },
      webhook: {
        enabled: true,
        host: "127.0.0.1",
        port: 0,
        rate_limit: RATE,
        ...(WORKERS > 0 ? { workers: WORKERS } : {}),
        ...(HTTP_SERVER !== "uws" ? { http_server: HTTP_SERVER } : {}),
        max_body_bytes: 8192,
        routes: {
          a: { secret: SECRET, prompt: "a {n}" },
          b: { secret: SECRET, prompt: "b {n}" },
          flt: {
            secret: SECRET,
            prompt: "flt {n}",
            filters: [{ field: "action", in: ["opened"] }],
          },
          grp: {
            secret: SECRET,
            prompt: "grp {k} {n}",
            coalesce: { key: "k", window_seconds: 1, max_wait_seconds: 3 },
          },
          dd: {
            secret: SECRET,
            deliver: "telegram",
            deliver_only: true,
            prompt: "dd {n}",
            deliver_extra: { chat_id: "7" },
          },
          rl: { secret: SECRET, prompt: "rl {n}" },
          // The burst sends pull_request events: every one is ignored by the event list.
          ev: { secret: SECRET, prompt: "ev {n}", events: ["push"] },
          // Its first message of each event is refused by the fake (502); the sender's retry is delivered.
          ddf: {
            secret: SECRET,
            deliver: "telegram",
            deliver_only: true,
            prompt: "ddf {n}",
            deliver_extra: { chat_id: "7" },
          },
        },
      },
    },
  });
}

interface Gw {
  child: ChildProcess;
  port: number;
  out: () => string;
  exited: Promise<number | null>;
}
function startGateway(): Promise<Gw> {
  const child = spawn(process.execPath, [join(ROOT, "dist/cli/main.js"), "gateway", "run", "--port", "0"], {
    env: { PATH: process.env.PATH ?? "", HOME: home, SVC_HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child);
  let out = "";
  const exited = new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (d) => {
      out += d;
      const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]), out: () => out, exited });
    });
    child.stderr?.on("data", (d) => (out += d));
    void exited.then((c) => reject(new Error(`exit ${c}: ${out}`)));
  });
}

type Kind =
  | "unique"
  | "dupConcurrent"
  | "dupLater"
  | "badsig"
  | "filtered"
  | "coalesce"
  | "nokey"
  | "direct"
  | "directDup"
  | "oversize"
  | "slow"
  | "rl"
  | "rlBad"
  | "directFail"
  | "eventIgnored";
interface Sent {
  kind: Kind;
  route: string;
  id: string;
  n: string;
  key?: string;
  round: number;
  status: number | "error";
  body: Record<string, unknown>;
  at: number;
  done?: number;
}
const sent: Sent[] = [];
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 24 });

function post(
  port: number,
  route: string,
  id: string,
  payload: Record<string, unknown>,
  opts: { badSig?: boolean; slow?: boolean; pad?: number; fresh?: boolean } = {},
): Promise<{ status: number | "error"; body: Record<string, unknown> }> {
  const body = Buffer.from(JSON.stringify(opts.pad ? { ...payload, pad: "x".repeat(opts.pad) } : payload));
  const sig = `sha256=${createHmac("sha256", opts.badSig ? "wrong" : SECRET)
    .update(body)
    .digest("hex")}`;
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: `/webhooks/${route}`,
        agent: opts.fresh ? false : keepAlive,
        headers: {
          "content-type": "application/json",
          "x-github-event": "pull_request",
          "x-github-delivery": id,
          "x-hub-signature-256": sig,
          ...(opts.slow ? { "transfer-encoding": "chunked" } : { "content-length": String(body.length) }),
          ...(opts.fresh ? { connection: "close" } : {}),
        },
      },
      (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => {
          let parsed: Record<string, unknown> = {};
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = { raw: text };
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on("error", (e) => resolve({ status: "error", body: { error: String(e) } }));
      },
    );
    req.on("error", (e) => resolve({ status: "error", body: { error: String(e) } }));
    if (opts.slow) {
      let i = 0;
      const step = Math.ceil(body.length / 5);
      const tick = () => {
        if (i >= body.length) {
          req.end();
          return;
        }
        req.write(body.subarray(i, i + step));
        i += step;
        setTimeout(tick, 150);
      };
      tick();
    } else req.end(body);
  });
}

let counter = 0;
/** ddf ids to send again after the burst, once their first delivery failed. */
const retryLater: string[] = [];
async function burst(port: number, round: number): Promise<void> {
  const tasks: Array<() => Promise<void>> = [];
  const add = (
    kind: Kind,
    route: string,
    id: string,
    payload: Record<string, unknown>,
    opts: Parameters<typeof post>[4] = {},
  ) =>
    tasks.push(async () => {
      const at = Date.now();
      const a = await post(port, route, id, payload, opts);
      sent.push({
        kind,
        route,
        id,
        n: String(payload.n),
        ...(payload.k ? { key: String(payload.k) } : {}),
        round,
        ...a,
        at,
        done: Date.now(),
      });
    });
  for (let i = 0; i < 120; i++) {
    const id = `r${round}-${counter++}`;
    const r = rnd();
    const fresh = rnd() < 0.3;
    if (r < 0.25) add("unique", pick(["a", "b"]), id, { n: id }, { fresh });
    else if (r < 0.3) {
      const route = pick(["a", "b"]);
      add("dupConcurrent", route, id, { n: id }, { fresh });
      add("dupConcurrent", route, id, { n: id }, { fresh: !fresh });
    } else if (r < 0.35) {
      const earlier = sent.filter((x) => x.status === 202 && (x.route === "a" || x.route === "b"));
      if (earlier.length > 0) {
        const x = pick(earlier);
        add("dupLater", x.route, x.id, { n: x.n });
      }
    } else if (r < 0.42) add("badsig", pick(["a", "b", "dd"]), id, { n: id }, { badSig: true, fresh });
    else if (r < 0.47) add("filtered", "flt", id, { n: id, action: pick(["closed", "opened"]) }, { fresh });
    else if (r < 0.5) add("eventIgnored", "ev", id, { n: id }, { fresh });
    else if (r < 0.62)
      add("coalesce", "grp", id, { n: id, k: `k${round}-${Math.floor(rnd() * 3)}` }, { fresh });
    else if (r < 0.63) add("nokey", "grp", id, { n: id }, { fresh });
    else if (r < 0.64) {
      const k = `k${round}-${Math.floor(rnd() * 3)}`;
      add("dupConcurrent", "grp", id, { n: id, k }, { fresh });
      add("dupConcurrent", "grp", id, { n: id, k: `${k}x` }, { fresh: !fresh });
    } else if (r < 0.72) add("direct", "dd", id, { n: id }, { fresh });
    else if (r < 0.75) {
      add("directDup", "dd", id, { n: id });
      add("directDup", "dd", id, { n: id }, { fresh: true });
    } else if (r < 0.77) add("oversize", pick(["a", "dd"]), id, { n: id }, { pad: 9000, fresh });
    else if (r < 0.8) {
      // Refused by the platform once: 502 for it and the duplicate sent with it, then delivered on a retry.
      add("directFail", "ddf", id, { n: id });
      add("directFail", "ddf", id, { n: id }, { fresh: true });
      retryLater.push(id);
    } else if (r < 0.85)
      add("slow", pick(["a", "grp"]), id, { n: id, k: `k${round}-slow` }, { slow: true, fresh });
    else {
      const bad = rnd() < 0.8;
      add(bad ? "rlBad" : "rl", "rl", id, { n: id }, { badSig: bad });
    }
  }
  for (let i = 0; i < 160; i++) {
    const id = `r${round}-rl${counter++}`;
    const bad = rnd() < 0.9;
    add(bad ? "rlBad" : "rl", "rl", id, { n: id }, { badSig: bad });
  }
  // Coalescing events across window boundaries: a trickle to one key over ~2.5 s.
  const trickleKey = `k${round}-trickle`;
  const trickle = (async () => {
    for (let i = 0; i < 6; i++) {
      const id = `r${round}-t${i}`;
      const at = Date.now();
      const a = await post(port, "grp", id, { n: id, k: trickleKey });
      sent.push({ kind: "coalesce", route: "grp", id, n: id, key: trickleKey, round, ...a, at });
      await sleep(pick([200, 400, 1100]));
    }
  })();
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const t = tasks[next++] as () => Promise<void>;
      await t();
    }
  };
  await Promise.all([trickle, ...Array.from({ length: 16 }, worker)]);
  for (const id of retryLater.splice(0)) {
    const at = Date.now();
    const a = await post(port, "ddf", id, { n: id });
    sent.push({ kind: "directFail", route: "ddf", id, n: id, round, ...a, at, done: Date.now() });
  }
}

function runLines(): Array<{ id: string; route: string; t: number; prompt: string }> {
  const f = join(home, "runs.log");
  if (!existsSync(f)) return [];
  return readFileSync(f, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [id, route, t, ...rest] = l.split("|");
      return { id: id as string, route: route as string, t: Number(t), prompt: rest.join("|") };
    });
}

function metricsOf(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const l of text.split("\n")) {
    const x = /^(svc_webhook_(?:requests|events)_total\{[^}]*\}) (\S+)$/.exec(l);
    if (x) m.set(x[1] as string, Number(x[2]));
  }
  return m;
}

function checkMetrics(text: string, since: Sent[]) {
  const got = metricsOf(text);
  const want = new Map<string, number>();
  const inc = (k: string) => want.set(k, (want.get(k) ?? 0) + 1);
  for (const x of since) {
    if (x.status === "error") continue;
    inc(`svc_webhook_requests_total{route="${x.route}",status="${x.status}"}`);
    const st = x.body.status as string | undefined;
    const outcome =
      st === "accepted" || st === "duplicate" || st === "ignored" || st === "coalesced" || st === "delivered"
        ? st
        : undefined;
    if (outcome) inc(`svc_webhook_events_total{route="${x.route}",outcome="${outcome}"}`);
  }
  console.log(`metrics: ${want.size} series expected, ${got.size} scraped`);
  for (const [k, v] of want)
    if ((got.get(k) ?? 0) !== v) problem(`metrics ${k}: got ${got.get(k)} want ${v}`);
  for (const [k, v] of got) if (v !== 0 && !want.has(k)) problem(`metrics ${k}: got ${v} want 0`);
}

async function main() {
  console.log(`seed ${SEED} backend ${BACKEND} home ${home}`);
  const telegram = await startFakeTelegram();
  const refused = new Set<string>();
  let messageId = 1;
  telegram.setHandler((request) => {
    if (!request.path.endsWith("/sendMessage"))
      return { json: { ok: true, result: { id: 42, is_bot: true, username: "svc_test_bot" } } };
    const text = String((request.json as { text?: unknown }).text ?? "");
    if (text.startsWith("ddf ") && !refused.has(text)) {
      refused.add(text);
      // Slow, so the duplicate sent with it arrives while it is under way and waits for it.
      return {
        status: 400,
        json: { ok: false, error_code: 400, description: "Bad Request: chat not found" },
        delayMs: 300,
      };
    }
    return { json: { ok: true, result: { message_id: messageId++, chat: { id: 7 }, text } } };
  });
  const redis = BACKEND === "redis" ? await startTestRedis() : undefined;
  writeFileSync(join(home, "config.yaml"), config(telegram.url, redis));
  const kills: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const gw = await startGateway();
      const from = sent.length;
      if (KILL || TERM) {
        const b = burst(gw.port, round);
        const after = 200 + Math.floor(rnd() * 2500);
        await sleep(after);
        gw.child.kill(TERM ? "SIGTERM" : "SIGKILL");
        if (KILL) kills.push(Date.now());
        console.log(`round ${round}: ${TERM ? "SIGTERM" : "SIGKILL"} after ${after} ms`);
        await b;
        const code = await gw.exited;
        if (TERM && code !== 0) problem(`SIGTERM exit ${code}`);
        if (existsSync(join(home, "state")))
          cpSync(join(home, "state"), join(home, `state-after-${round}`), { recursive: true });
      } else {
        const runsBefore = runLines().length;
        await burst(gw.port, round);
        await sleep(4500); // groups fire (max wait 3 s)
        let text = "";
        for (let i = 0; i < 60; i++) {
          text = await (await fetch(`http://127.0.0.1:${gw.port}/metrics`)).text();
          if (/^svc_runs_waiting 0$/m.test(text) && /^svc_runs_active 0$/m.test(text)) break;
          await sleep(500);
        }
        checkMetrics(text, sent.slice(from));
        const value = (series: string) =>
          Number(new RegExp(`^${series.replace(/[{}]/g, "\\$&")} (\\S+)$`, "m").exec(text)?.[1]);
        const ran = runLines().length - runsBefore;
        const sentToTelegram = telegram.requests.filter((r) => r.path.endsWith("/sendMessage")).length;
        console.log(
          `runs ${ran}: run ok ${value('svc_run_duration_seconds_count{outcome="ok"}')}, log attempts ${value('svc_delivery_attempts_total{platform="log"}')}, telegram attempts ${value('svc_delivery_attempts_total{platform="telegram"}')} (fake got ${sentToTelegram} in all)`,
        );
        if (value('svc_run_duration_seconds_count{outcome="ok"}') !== ran)
          problem(`run count: metrics vs runs.log ${ran}`);
        if (value('svc_delivery_attempts_total{platform="log"}') !== ran)
          problem(`log attempts vs runs.log ${ran}`);
        gw.child.kill("SIGTERM");
        const code = await gw.exited;
        if (code !== 0) problem(`SIGTERM exit ${code}`);
      }
      const counts: Record<string, number> = {};
      for (const x of sent.slice(from)) {
        const k = `${x.kind}:${x.status}/${String(x.body.status ?? x.body.error ?? "")}`;
        counts[k] = (counts[k] ?? 0) + 1;
      }
      console.log(`round ${round}: ${JSON.stringify(counts)}`);
    }
    // Settle.
    const gw = await startGateway();
    const retries = sent.filter((x) => x.status === 202 && (x.route === "a" || x.route === "b")).slice(0, 10);
    for (const x of retries) {
      const a = await post(gw.port, x.route, x.id, { n: x.n });
      if (a.status !== 200 || a.body.status !== "duplicate")
        problem(`retry after restart of ${x.id}: ${a.status} ${JSON.stringify(a.body)}`);
    }
    const dretries = sent.filter((x) => x.status === 200 && x.body.status === "delivered").slice(0, 5);
    for (const x of dretries) {
      const a = await post(gw.port, x.route, x.id, { n: x.n });
      if (a.status !== 200 || a.body.status !== "duplicate")
        problem(`retry after restart of delivered ${x.id}: ${a.status} ${JSON.stringify(a.body)}`);
    }
    const cretries = sent.filter((x) => x.status === 202 && x.body.status === "coalesced").slice(0, 5);
    for (const x of cretries) {
      const a = await post(gw.port, x.route, x.id, { n: x.n, k: x.key });
      if (a.status !== 200 || a.body.status !== "duplicate")
        problem(`retry after restart of coalesced ${x.id}: ${a.status} ${JSON.stringify(a.body)}`);
    }
    const cli = (...argv: string[]) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        const c = spawn(process.execPath, [join(ROOT, "dist/cli/main.js"), ...argv], {
          env: { PATH: process.env.PATH ?? "", HOME: home, SVC_HOME: home },
        });
        let stdout = "";
        let stderr = "";
        c.stdout.on("data", (d) => (stdout += d));
        c.stderr.on("data", (d) => (stderr += d));
        c.on("close", (status) => resolve({ status, stdout, stderr }));
      });
    const redelivered: string[] = [];
    const acc = sent.find((x) => x.status === 202 && x.body.status === "accepted" && x.route === "a");
    if (acc) {
      const r = await cli("webhook", "redeliver", acc.id);
      console.log(`redeliver ${acc.id}: exit ${r.status} ${r.stdout.trim()} ${r.stderr.trim()}`);
      const m = /redelivery-[0-9a-f]{8}-\S+/.exec(r.stdout);
      if (r.status !== 0 || !m) problem(`redeliver ${acc.id}: ${r.status} ${r.stdout} ${r.stderr}`);
      else {
        const rid = m[0].replace(/[",)]+$/, "");
        redelivered.push(rid);
        sent.push({ ...acc, id: rid, kind: "unique", status: 202, body: { status: "accepted" } });
      }
    }
    const dl = sent.find((x) => x.body.status === "delivered");
    if (dl) {
      const r = await cli("webhook", "redeliver", dl.id);
      const m = /redelivery-[0-9a-f]{8}-[^\s)"]+/.exec(r.stdout);
      if (m) sent.push({ ...dl, id: m[0], kind: "direct", status: 200, body: { status: "delivered" } });
      console.log(`redeliver ${dl.id}: exit ${r.status} ${r.stdout.trim()} ${r.stderr.trim()}`);
    }
    const bad = sent.find((x) => x.status === 401);
    if (bad) {
      const r = await cli("webhook", "redeliver", bad.id, "--route", bad.route);
      console.log(`redeliver 401 ${bad.id}: exit ${r.status} ${r.stdout.trim()} ${r.stderr.trim()}`);
      if (r.status !== 2) problem(`redeliver of a 401: exit ${r.status}`);
    }
    const ign = sent.find((x) => x.body.status === "ignored");
    if (ign) {
      const r = await cli("webhook", "redeliver", ign.id);
      console.log(`redeliver ignored ${ign.id}: exit ${r.status} ${r.stdout.trim()} ${r.stderr.trim()}`);
    }
    const deadline = Date.now() + (redis ? 150_000 : 15_000);
    for (;;) {
      await sleep(1000);
      const ran = new Set(runLines().map((l) => `${l.route}:${l.id}`));
      const owed = sent.filter(
        (x) => x.status === 202 && x.body.status === "accepted" && !ran.has(`${x.route}:${x.id}`),
      );
      const groupsOwed = [
        ...new Set(
          sent.filter((x) => x.status === 202 && x.body.status === "coalesced").map((x) => x.key as string),
        ),
      ].filter((key) => !runLines().some((l) => l.route === "grp" && l.prompt.includes(`grp ${key} `)));
      if ((owed.length === 0 && groupsOwed.length === 0) || Date.now() > deadline) {
        console.log(`settled: ${owed.length} runs and ${groupsOwed.length} groups owed`);
        break;
      }
    }
    await sleep(3000);
    for (const id of redelivered)
      if (!runLines().some((l) => l.id === id)) problem(`redelivery ${id} did not run`);
    const rows2 = await cli("webhook", "deliveries", "--limit", "5");
    console.log(rows2.stdout);
    console.log(`kills ${kills.join(",")}`);
    check(
      telegram.requests.map((r) => (r.json as { text?: string }).text ?? ""),
      kills.length > 0,
    );
    // History
    const hist = await cli("webhook", "deliveries", "--json", "--limit", "100000");
    let rows: Array<Record<string, unknown>> = [];
    try {
      rows = JSON.parse(hist.stdout);
    } catch {
      problem(`deliveries --json: ${hist.stdout.slice(0, 300)} ${hist.stderr.slice(0, 300)}`);
    }
    checkHistory(rows, kills);
    writeFileSync(join(home, "rows.json"), JSON.stringify(rows, null, 1));
    writeFileSync(join(home, "sent.json"), JSON.stringify(sent, null, 1));
    writeFileSync(join(home, "gw.out"), gw.out());
    gw.child.kill("SIGTERM");
    await gw.exited;
  } finally {
    for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    await telegram.close();
    await redis?.cleanup();
    keepAlive.destroy();
  }
  if (problems.length === 0 && !args.includes("--keep")) rmSync(home, { recursive: true, force: true });
  else console.log(`home kept: ${home}`);
  console.log(`${problems.length} problem(s); seed ${SEED}`);
  process.exit(problems.length === 0 ? 0 : 1);
}

function check(texts: string[], killed: boolean) {
  const lines = runLines();
  const byId = new Map<string, number>();
  for (const l of lines) byId.set(`${l.route}:${l.id}`, (byId.get(`${l.route}:${l.id}`) ?? 0) + 1);
  // Every 202 accepted ran exactly once (at least once with kills).
  for (const x of sent.filter((y) => y.status === 202 && y.body.status === "accepted")) {
    const n = byId.get(`${x.route}:${x.id}`) ?? 0;
    if (n === 0) problem(`${x.kind} ${x.route}/${x.id} accepted, never ran`);
    if (n > 1 && !killed) problem(`${x.kind} ${x.route}/${x.id} ran ${n} times`);
    if (n > 1 && killed)
      console.log(
        `  ${x.kind} ${x.route}/${x.id} ran ${n} times (answered ${x.done}) at ${lines
          .filter((l) => l.id === x.id && l.route === x.route)
          .map((l) => l.t)
          .join(",")}`,
      );
  }
  // Nothing else ran (except coalesced group runs).
  const acceptedIds = new Set(sent.filter((y) => y.status === 202).map((y) => `${y.route}:${y.id}`));
  const maybe = new Set(sent.filter((y) => y.status === "error").map((y) => `${y.route}:${y.id}`));
  for (const k of byId.keys())
    if (!acceptedIds.has(k) && !maybe.has(k)) problem(`ran ${k}, never answered 202`);
  // Coalescing: per key, runs cover exactly its 202 coalesced events.
  const byKey = new Map<string, Sent[]>();
  for (const x of sent.filter((y) => y.status === 202 && y.body.status === "coalesced"))
    byKey.set(x.key as string, [...(byKey.get(x.key as string) ?? []), x]);
  for (const [key, evs] of byKey) {
    const runs = lines.filter((l) => l.route === "grp" && l.prompt.includes(`grp ${key} `));
    const distinct = new Map(runs.map((r) => [r.id, r.prompt]));
    if (!killed && distinct.size !== runs.length) problem(`grp ${key}: a group run repeated`);
    let covered = 0;
    for (const p of distinct.values()) covered += Number(/covers (\d+) events/.exec(p)?.[1] ?? 1);
    const maybeN = sent.filter((y) => y.key === key && y.status === "error").length;
    if (covered < evs.length || covered > evs.length + maybeN)
      problem(
        `grp ${key}: ${evs.length} coalesced, runs cover ${covered} (${[...distinct.keys()].join(",")})`,
      );
  }
  // Direct: each delivered reached telegram exactly once.
  const tcount = new Map<string, number>();
  for (const t of texts) tcount.set(t, (tcount.get(t) ?? 0) + 1);
  for (const x of sent.filter((y) => y.status === 200 && y.body.status === "delivered")) {
    const n = tcount.get(`${x.route} ${x.n}`) ?? 0;
    if (n === 0) problem(`${x.route} ${x.id} delivered, platform never got it`);
    const redelivered =
      x.id.startsWith("redelivery-") ||
      sent.some((y) => y.id.startsWith("redelivery-") && y.id.endsWith(`-${x.id}`));
    const allowed = 1 + (redelivered ? 1 : 0) + (x.route === "ddf" ? 1 : 0); // ddf: its refused attempt
    if (n > allowed && !killed) problem(`${x.route} ${x.id} sent ${n} times`);
  }
  for (const x of sent.filter((y) => y.status === 200 && y.body.status === "duplicate" && y.route === "dd"))
    if (!tcount.has(`dd ${x.n}`)) problem(`dd ${x.id} answered duplicate, never delivered`);
  // Concurrent duplicates: exactly one of each pair was not a duplicate.
  const pairs = new Map<string, Sent[]>();
  for (const x of sent.filter((y) => y.kind === "dupConcurrent" || y.kind === "directDup"))
    pairs.set(`${x.route}:${x.id}`, [...(pairs.get(`${x.route}:${x.id}`) ?? []), x]);
  for (const [k, xs] of pairs) {
    const firsts = xs.filter(
      (x) => x.body.status !== "duplicate" && x.status !== "error" && x.status !== 503,
    );
    if (firsts.length > 1) problem(`pair ${k}: ${JSON.stringify(xs.map((x) => [x.status, x.body]))}`);
  }
  for (const x of sent) {
    const bad = (x.kind === "badsig" || x.kind === "rlBad") && ![401, 429, 503, "error"].includes(x.status);
    const over = x.kind === "oversize" && ![413, 503, "error"].includes(x.status);
    if (bad || over) problem(`${x.kind} ${x.id}: ${x.status} ${JSON.stringify(x.body)}`);
    if (x.kind === "filtered" && x.status === 200 && x.body.status === "accepted") problem(`flt ${x.id}`);
    if (x.kind === "eventIgnored" && x.status !== "error" && x.status !== 503 && x.body.status !== "ignored")
      problem(`ev ${x.id}: ${x.status} ${JSON.stringify(x.body)}`);
    if (x.status === 500) problem(`500 for ${x.kind} ${x.id}`);
  }
  console.log(`runs ${lines.length}, telegram ${texts.length}`);
}

function checkHistory(rows: Array<Record<string, unknown>>, kills: number[]) {
  const byKey = new Map<string, Array<Record<string, unknown>>>();
  for (const r of rows) {
    const k = `${r.route}:${r.delivery_id ?? r.id}`;
    byKey.set(k, [...(byKey.get(k) ?? []), r]);
  }
  // Refused requests past a route's allowance are counted in its `not_recorded` rows, not recorded one by one.
  const counted = new Map<string, number>();
  for (const r of rows) {
    const n = (r.not_recorded as { count?: number } | undefined)?.count;
    if (n !== undefined) counted.set(String(r.route), (counted.get(String(r.route)) ?? 0) + n);
  }
  let missing = 0;
  for (const x of sent) {
    if (x.status === "error") continue;
    const rs = byKey.get(`${x.route}:${x.id}`) ?? [];
    const want = String(x.body.status ?? x.body.error);
    if (!rs.some((r) => r.status === x.status && r.outcome === want)) {
      const refused = (x.status < 200 || x.status >= 300) && x.status !== 502;
      const left = counted.get(x.route) ?? 0;
      if (refused && left > 0) {
        counted.set(x.route, left - 1);
        continue;
      }
      // Rows of answers other than 202 and 200 delivered are written at the end of their turn.
      const kept = x.status === 202 || x.body.status === "delivered";
      const nearKill = kills.some((k) => k >= x.at - 5 && k <= (x.done ?? x.at) + (kept ? 2 : 500));
      if (!nearKill) {
        missing++;
        if (missing < 6)
          problem(
            `history: ${x.kind} ${x.route}/${x.id} ${x.status} ${want} sent ${x.at} answered ${x.done} kills ${kills.join(",")}: rows ${JSON.stringify(rs).slice(0, 400)}`,
          );
      }
    }
  }
  console.log(`history rows ${rows.length}, missing ${missing}`);
  // A failed direct delivery and the retry that was delivered each show their own delivery; a duplicate
  // answered 502 with its original shows none.
  for (const id of new Set(sent.filter((x) => x.route === "ddf").map((x) => x.id))) {
    const rs = byKey.get(`ddf:${id}`) ?? [];
    const shown = (outcome: string) =>
      rs.filter((r) => (r.delivery as { outcome?: string } | null | undefined)?.outcome === outcome).length;
    const delivered = sent.filter((x) => x.route === "ddf" && x.id === id && x.body.status === "delivered");
    const okOnDelivered = rs.every(
      (r) =>
        ((r.delivery as { outcome?: string } | null | undefined)?.outcome === "ok") ===
        (r.status === 200 && r.outcome === "delivered"),
    );
    if (kills.length === 0 && (shown("failed") !== 1 || shown("ok") !== delivered.length || !okOnDelivered))
      problem(`history ddf ${id}: ${JSON.stringify(rs.map((r) => [r.status, r.outcome, r.delivery]))}`);
  }
}

await main();
