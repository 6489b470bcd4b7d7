// Randomized crash-loop probe ("accepted must mean kept", docs/durability.md). Not part of the suite; needs
// `node scripts/build.mjs` first (the gateway runs from dist/, or from src/ through tsx with --small-segments).
//   node --import tsx bench/crashLoop.ts [--seed N] [--iterations N] [--backend local|redis] [--small-segments] [--keep]
// Each iteration: start the gateway(s) on the same home(s), send a burst of signed webhooks to four routes
// (agent runs, a coalescing route, a cron_job route, a deliver_only route to a fake Telegram), and at a random
// moment SIGKILL / SIGTERM / SIGHUP-then-kill the gateway. Then restart and check the docs' promises.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { startFakeTelegram } from "../test/fakes/telegram.js";
import { oneJobStore } from "../test/helpers/cronJobs.js";
import { type TempHome, tempHome } from "../test/helpers/home.js";
import { type DeliveryAnswer, deliverSigned } from "../test/helpers/http.js";
import { startTestRedis, type TestRedis } from "../test/helpers/redis.js";
import { optionOf, problemList, seededRandom, sleep } from "./probeKit.js";

const ROOT = join(import.meta.dirname, "..");
const args = process.argv.slice(2);
const opt = optionOf(args);
const SEED = Number(opt("seed", String(Date.now() % 100000)));
const ITERATIONS = Number(opt("iterations", "10"));
const BACKEND = opt("backend", "local");
const SMALL = args.includes("--small-segments");
const SECRET = "crash-loop-secret";

const { rnd, pick } = seededRandom(SEED);
const { problems, problem } = problemList();

// ---------- gateway process ----------
interface Gw {
  child: ChildProcess;
  port: number;
  out: () => string;
  exited: Promise<number | null>;
}
const started: ChildProcess[] = [];
function startGateway(home: TempHome): Promise<Gw> {
  const argv = SMALL
    ? [
        "--import",
        "tsx",
        "--import",
        join(ROOT, "bench/crashLoopSmallSegments.mjs"),
        join(ROOT, "src/cli/main.ts"),
      ]
    : [join(ROOT, "dist/cli/main.js")];
  const child = spawn(process.execPath, [...argv, "gateway", "run", "--port", "0"], {
    env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child);
  let out = "";
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no Listening line in 30 s: ${out}`)), 30_000);
    child.stdout?.on("data", (d) => {
      out += d;
      const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]), out: () => out, exited });
      }
    });
    child.stderr?.on("data", (d) => (out += d));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited ${code} at start: ${out}`));
    });
  });
}

// ---------- requests ----------
type Answer = DeliveryAnswer;
/** A signed `pull_request` delivery of `payload` to `route`, as the probe's bursts send it; never rejects. */
const send = (port: number, route: string, id: string, payload: Record<string, unknown>): Promise<Answer> =>
  deliverSigned(port, route, id, SECRET, payload);

interface Sent {
  route: string;
  id: string;
  key?: string;
  iteration: number;
  answer: Answer;
  at: number;
}
const sent: Sent[] = [];

// ---------- homes ----------
function agent(home: TempHome) {
  return {
    provider: "command",
    command: [
      "sh",
      "-c",
      `p="$(tr '\\n' ' ')"; s=$(date +%s%3N); sleep 0.1; printf "%s %s %s %s\\n" "$SVC_DELIVERY_ID" "$s" "$(date +%s%3N)" "$p" >> "$0/runs.log"`,
      home.dir,
    ],
    max_concurrent_runs: 4,
  };
}
function writeConfig(
  home: TempHome,
  telegramUrl: string,
  redis: TestRedis | undefined,
  windowSeconds: number,
) {
  home.write(
    "config.yaml",
    stringify({
      ...(redis ? { state: { backend: "redis", redis_url: redis.url, redis_key_prefix: `p${SEED}` } } : {}),
      gateway: { drain_timeout_seconds: 5 },
      agent: agent(home),
      platforms: {
        telegram: { enabled: true, token: "123:abc", base_url: telegramUrl },
        webhook: {
          enabled: true,
          host: "127.0.0.1",
          port: 0,
          rate_limit: 100_000,
          routes: {
            pr: { secret: SECRET, prompt: "pr {number}" },
            grp: {
              secret: SECRET,
              prompt: "grp {k} {number}",
              ...(windowSeconds > 0
                ? { coalesce: { key: "k", window_seconds: windowSeconds, max_wait_seconds: 3 } }
                : {}),
            },
            cj: { secret: SECRET, cron_job: "nightly" },
            notify: {
              secret: SECRET,
              deliver: "telegram",
              deliver_only: true,
              prompt: "Deploy {number}",
              deliver_extra: { chat_id: "7" },
            },
          },
        },
      },
    }),
  );
}

/** [delivery id, prompt, started ms, ended ms] per run line. */
function runLines(home: TempHome): Array<[string, string, number, number]> {
  const file = join(home.dir, "runs.log");
  if (!existsSync(file)) return [];
  return (
    readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l): [string, string, number, number] => {
        const [id, start, end, ...rest] = l.split(" ");
        return [id as string, rest.join(" "), Number(start), Number(end)];
      })
      // An agent whose gateway was killed before it wrote the prompt read none: a run cut off, not one made.
      .filter(([, prompt]) => prompt.trim() !== "")
  );
}
/** [iteration, mode, the kill's time] */
const stops: Array<[number, string, number]> = [];

async function liveOnDisk(home: TempHome): Promise<{ runs: number; groups: number }> {
  if (BACKEND !== "local") return { runs: 0, groups: 0 };
  const { readJournal } = await import("../src/io/state/journal/segments.js");
  const { LiveState } = await import("../src/state/liveState.js");
  const live = new LiveState();
  for (const record of readJournal(join(home.dir, "state")).records) live.apply(record);
  return { runs: live.runs.size, groups: live.groups.size };
}

// ---------- main ----------
async function main() {
  console.log(`seed ${SEED} iterations ${ITERATIONS} backend ${BACKEND}${SMALL ? " small-segments" : ""}`);
  const telegram = await startFakeTelegram();
  const redis = BACKEND === "redis" ? await startTestRedis() : undefined;
  const homes = BACKEND === "redis" ? [tempHome(), tempHome()] : [tempHome()];
  const runsHome = homes[0] as TempHome;
  for (const home of homes) {
    writeConfig(home, telegram.url, redis, 1);
    home.write(
      "cron/jobs.json",
      oneJobStore({ name: "nightly", prompt: "nightly job", next_run: "2099-01-01T00:00:00.000Z" }),
    );
  }
  // Redis: every instance appends to the first home's runs.log.
  if (redis)
    for (const home of homes) {
      const cfg = readFileSync(join(home.dir, "config.yaml"), "utf8").replaceAll(home.dir, runsHome.dir);
      home.write("config.yaml", cfg);
    }
  if (redis) homes[1]?.write("cron/jobs.json", readFileSync(join(runsHome.dir, "cron/jobs.json"), "utf8"));

  let gws: Gw[] = [];
  try {
    for (let it = 0; it < ITERATIONS; it++) {
      for (const home of homes) writeConfig(home, telegram.url, redis, 1);
      if (redis)
        for (const home of homes)
          home.write(
            "config.yaml",
            readFileSync(join(home.dir, "config.yaml"), "utf8").replaceAll(home.dir, runsHome.dir),
          );
      // Sometimes a start is killed first, while it replays the journal, takes its lock or queues runs again.
      if (rnd() < 0.3) {
        const early = startGateway(homes[0] as TempHome).catch(() => undefined);
        const child = started[started.length - 1] as ChildProcess;
        const after = Math.floor(rnd() * 700);
        await sleep(after);
        child.kill("SIGKILL");
        stops.push([it, "kill-at-start", Date.now()]);
        await early;
        await new Promise((r) =>
          child.exitCode !== null || child.signalCode !== null ? r(undefined) : child.once("exit", r),
        );
        console.log(`  start killed after ${after} ms`);
      }
      try {
        gws = [];
        for (const home of homes) gws.push(await startGateway(home));
      } catch (err) {
        problem(`iteration ${it}: the gateway did not start: ${String(err).slice(0, 2000)}`);
        break;
      }
      // Retries of earlier accepted ids must be duplicates (within the hour).
      const earlier = sent.filter(
        (x) => "status" in x.answer && x.answer.status === 202 && x.route !== "grp",
      );
      for (let n = 0; n < Math.min(6, earlier.length); n++) {
        const x = pick(earlier);
        const gw = pick(gws);
        const a = await send(gw.port, x.route, x.id, { number: x.id, k: x.key });
        if (!("status" in a) || a.status !== 200 || a.body.status !== "duplicate")
          problem(
            `iteration ${it}: retry of accepted ${x.route}/${x.id} (iteration ${x.iteration}) answered ${JSON.stringify(a)}`,
          );
      }
      const deliveredBefore = sent.filter(
        (x) => "status" in x.answer && x.answer.status === 200 && x.answer.body.status === "delivered",
      );
      for (let n = 0; n < Math.min(3, deliveredBefore.length); n++) {
        const x = pick(deliveredBefore);
        const a = await send(pick(gws).port, x.route, x.id, { number: x.id });
        if (!("status" in a) || a.status !== 200 || a.body.status !== "duplicate")
          problem(`iteration ${it}: retry of delivered ${x.id} answered ${JSON.stringify(a)}`);
      }

      const mode = pick(["kill", "kill", "kill", "term", "hup-kill", "term-kill", "term-kill"] as const);
      const killAfter = Math.floor(rnd() * 900);
      const windowSeconds = pick([0, 1, 2]);
      console.log(
        `iteration ${it}: ${mode} after ${killAfter} ms, ports ${gws.map((g) => g.port).join(",")}`,
      );
      // The burst.
      const plan: Array<{ route: string; id: string; key?: string }> = [];
      const n = 40 + Math.floor(rnd() * 60);
      for (let i = 0; i < n; i++) {
        const r = rnd();
        const id = `i${it}-${i}`;
        if (r < 0.45) plan.push({ route: "pr", id });
        else if (r < 0.7) plan.push({ route: "grp", id, key: `k${it}-${Math.floor(rnd() * 4)}` });
        else if (r < 0.8) plan.push({ route: "cj", id });
        else plan.push({ route: "notify", id });
        if (rnd() < 0.1) plan.push({ ...(plan[plan.length - 1] as { route: string; id: string }) }); // repeated id
      }
      let next = 0;
      const sender = async () => {
        while (next < plan.length) {
          const p = plan[next++] as { route: string; id: string; key?: string };
          const gw = pick(gws);
          const answer = await send(gw.port, p.route, p.id, { number: p.id, k: p.key });
          sent.push({ ...p, iteration: it, answer, at: Date.now() });
          if (rnd() < 0.3) await sleep(Math.floor(rnd() * 40));
        }
      };
      const burst = Promise.all(Array.from({ length: 8 }, sender));
      await sleep(killAfter);
      const victim = pick(gws);
      if (mode === "hup-kill") {
        for (const home of homes) writeConfig(home, telegram.url, redis, windowSeconds);
        if (redis)
          for (const home of homes)
            home.write(
              "config.yaml",
              readFileSync(join(home.dir, "config.yaml"), "utf8").replaceAll(home.dir, runsHome.dir),
            );
        victim.child.kill("SIGHUP");
        await sleep(Math.floor(rnd() * 300));
      }
      stops.push([it, mode, Date.now()]);
      if (mode === "term-kill") {
        victim.child.kill("SIGTERM");
        await sleep(Math.floor(rnd() * 1200));
        stops.push([it, "kill-after-term", Date.now()]);
        victim.child.kill("SIGKILL");
      } else victim.child.kill(mode === "term" ? "SIGTERM" : "SIGKILL");
      await burst;
      // Stop the rest (redis: the other instance runs on and takes over).
      for (const gw of gws) {
        if (gw !== victim && redis === undefined) gw.child.kill("SIGKILL");
      }
      const code = await victim.exited;
      if (mode === "term" && code !== 0)
        problem(`iteration ${it}: SIGTERM exit code ${code}: ${victim.out().slice(-2000)}`);
      if (redis) {
        for (const gw of gws)
          if (gw !== victim) {
            gw.child.kill("SIGTERM");
            await gw.exited;
          }
      }
      const counts: Record<string, number> = {};
      for (const x of sent.filter((y) => y.iteration === it)) {
        const k = `${x.route}:${"status" in x.answer ? `${x.answer.status}${x.answer.body.status ? `/${x.answer.body.status}` : ""}` : "noanswer"}`;
        counts[k] = (counts[k] ?? 0) + 1;
      }
      console.log(`  answers ${JSON.stringify(counts)}`);
      for (const gw of gws) {
        const bad = gw
          .out()
          .split("\n")
          .filter((l) => /"level":(50|60)|ERROR|FATAL/.test(l));
        for (const l of bad.slice(0, 3)) problem(`iteration ${it}: error line: ${l.slice(0, 500)}`);
      }
    }
    // Final: start, let everything settle, check.
    gws = [];
    for (const home of homes) gws.push(await startGateway(home));
    const deadline = Date.now() + (redis ? 150_000 : 40_000);
    let lastLen = -1;
    let stableSince = Date.now();
    for (;;) {
      const len = runLines(runsHome).length;
      const live = await liveOnDisk(runsHome);
      if (len !== lastLen) {
        lastLen = len;
        stableSince = Date.now();
      }
      const ran = new Set(runLines(runsHome).map(([id]) => id));
      const owed = sent.filter(
        (x) => x.route === "pr" && "status" in x.answer && x.answer.status === 202 && !ran.has(x.id),
      );
      if (
        live.runs === 0 &&
        live.groups === 0 &&
        owed.length === 0 &&
        Date.now() - stableSince > (redis ? 8000 : 4000)
      )
        break;
      if (Date.now() > deadline) {
        problem(`did not settle: live ${JSON.stringify(live)}`);
        break;
      }
      await sleep(250);
    }
    await check(
      runsHome,
      homes,
      telegram.requests.map((r) => r.json as { text?: string }),
    );
    for (const gw of gws) {
      const metrics = await (await fetch(`http://127.0.0.1:${gw.port}/metrics`)).text();
      const lines = metrics.split("\n").filter((l) => /^svc_(state|runs|coalesce|journal)/.test(l));
      console.log(`metrics ${gw.port}:\n  ${lines.join("\n  ")}`);
    }
    for (const gw of gws) gw.child.kill("SIGTERM");
    for (const gw of gws) {
      const code = await gw.exited;
      if (code !== 0) problem(`final SIGTERM exit ${code}`);
    }
    for (const home of homes) {
      const stateDir = join(home.dir, "state");
      if (existsSync(stateDir)) {
        const files = readdirSync(stateDir, { recursive: true }).map(String);
        const odd = files.filter(
          (f) => /tmp|LOCK|damaged/.test(f) || f.startsWith("agents/") || f.startsWith("cron-runs/"),
        );
        if (odd.length > 0) problem(`left in state/ after a stop: ${odd.join(", ")}`);
        const segs = files.filter((f) => f.endsWith(".seg"));
        if (segs.length > 1) problem(`segments after a stop: ${segs.join(", ")}`);
        for (const f of segs) console.log(`  ${f}: ${readFileSync(join(stateDir, f)).length} bytes`);
      }
      for (const f of readdirSync(home.dir)) if (/\.tmp|\.lock/.test(f)) problem(`left in home: ${f}`);
    }
  } finally {
    for (const child of started)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await telegram.close();
    await redis?.cleanup();
    if (problems.length === 0 && !args.includes("--keep")) for (const home of homes) home.cleanup();
    else console.log(`homes kept: ${homes.map((h) => h.dir).join(" ")}\nstops: ${JSON.stringify(stops)}`);
  }
  console.log(`${problems.length} problem(s); seed ${SEED}`);
  process.exit(problems.length === 0 ? 0 : 1);
}

async function check(home: TempHome, allHomes: TempHome[], messages: Array<{ text?: string }>) {
  const lines = runLines(home);
  const byId = new Map<string, string[]>();
  for (const [id, prompt] of lines) byId.set(id, [...(byId.get(id) ?? []), prompt]);
  const accepted = (route: string) =>
    sent.filter((x) => x.route === route && "status" in x.answer && x.answer.status === 202);
  const answeredNo = (x: Sent) => "status" in x.answer && x.answer.status >= 400;
  // pr: every 202 ran; duplicates listed.
  let dup = 0;
  for (const x of accepted("pr")) {
    const n = byId.get(x.id)?.filter((p) => p.startsWith("pr ")).length ?? 0;
    if (n === 0) problem(`pr ${x.id} answered 202 in iteration ${x.iteration} never ran`);
    if (n > 1) {
      dup++;
      const runs = lines.filter(([id]) => id === x.id);
      const first = runs[0] as [string, string, number, number];
      const stop = stops.find(
        ([, mode, at]) =>
          mode !== "term" && mode !== "term-kill" && at >= first[2] - 300 && at <= first[3] + 1000,
      );
      const what = `pr ${x.id} ran ${n} times: first ${first[2]}..${first[3]}, stop in that run ${JSON.stringify(stop)}`;
      if (!stop) problem(what);
      else console.log(`  ${what}`);
    }
  }
  console.log(`pr: ${accepted("pr").length} accepted, ${dup} ran more than once`);
  // cron_job: fires.
  const fires = accepted("cj");
  const nightly = lines.filter(([, p]) => p.includes("nightly job"));
  const cjIds = new Map<string, number>();
  for (const [id] of nightly) cjIds.set(id, (cjIds.get(id) ?? 0) + 1);
  if (nightly.length < fires.length)
    problem(`cj: ${nightly.length} nightly runs for ${fires.length} fires answered 202`);
  console.log(
    `cj: ${fires.length} accepted fires, ${nightly.length} runs (${[...cjIds.values()].filter((v) => v > 1).length} ids more than once)`,
  );
  // grp: each key's 202 events covered by its runs.
  const byKey = new Map<string, Sent[]>();
  for (const x of accepted("grp")) byKey.set(x.key as string, [...(byKey.get(x.key as string) ?? []), x]);
  let groupDup = 0;
  for (const [key, events] of byKey) {
    const runs = lines.filter(([, p]) => p.includes(`grp ${key} `));
    const distinct = new Map<string, string>();
    for (const [id, p] of runs) {
      if (distinct.has(id)) {
        groupDup++;
        const first = runs.find(([other]) => other === id) as [string, string, number, number];
        const kill = stops.find(
          ([, mode, at]) =>
            mode !== "term" && mode !== "term-kill" && at >= first[2] - 300 && at <= first[3] + 1000,
        );
        if (kill === undefined)
          problem(`grp ${key}: group run ${id} ran again with no kill during its first run`);
      }
      distinct.set(id, p);
    }
    let covered = 0;
    for (const p of distinct.values()) {
      const m = /covers (\d+) events/.exec(p);
      covered += m ? Number(m[1]) : 1;
    }
    const ids = new Set(events.map((e) => e.id));
    const maybe = new Set(sent.filter((y) => y.key === key && "error" in y.answer).map((y) => y.id));
    if (covered < ids.size || covered > ids.size + maybe.size)
      problem(
        `grp ${key}: ${ids.size} events answered 202, runs cover ${covered}: ${JSON.stringify([...distinct])} events ${[...ids].join(",")}`,
      );
    for (const id of distinct.keys())
      if (!ids.has(id) && !maybe.has(id)) problem(`grp ${key}: run under ${id}, not an event answered 202`);
  }
  console.log(`grp: ${byKey.size} keys, ${accepted("grp").length} events, ${groupDup} repeated group runs`);
  // Nothing answered 4xx/5xx ran; nothing ran that was never sent.
  const sentIds = new Set(sent.map((x) => x.id));
  for (const x of sent.filter(answeredNo)) {
    if (accepted(x.route).some((y) => y.id === x.id)) continue;
    if (byId.has(x.id) && x.route !== "notify")
      problem(`${x.route} ${x.id} answered ${JSON.stringify(x.answer)} ran`);
  }
  for (const id of byId.keys())
    if (!sentIds.has(id) && !id.startsWith("cron-")) problem(`ran ${id}, never sent`);
  // notify: every 200 delivered was sent to the fake; count repeats.
  const texts = new Map<string, number>();
  for (const m of messages) if (m?.text) texts.set(m.text, (texts.get(m.text) ?? 0) + 1);
  const delivered = sent.filter(
    (x) =>
      x.route === "notify" &&
      "status" in x.answer &&
      x.answer.status === 200 &&
      x.answer.body.status === "delivered",
  );
  for (const x of delivered)
    if (!texts.has(`Deploy ${x.id}`))
      problem(`notify ${x.id} answered delivered but the platform never got it`);
  const twice = [...texts.entries()].filter(([, n]) => n > 1);
  console.log(
    `notify: ${delivered.length} delivered, ${texts.size} distinct messages, ${twice.length} sent more than once ${JSON.stringify(twice.slice(0, 5))}`,
  );
  // The delivery history: every answered request has its row with that answer.
  const history = allHomes.flatMap((h) => {
    const historyFile = join(h.dir, "deliveries/history.jsonl");
    return existsSync(historyFile)
      ? readFileSync(historyFile, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>)
      : [];
  });
  const rows = new Map<string, Array<Record<string, unknown>>>();
  for (const r of history)
    if (r.kind === "request") rows.set(`${r.route}:${r.id}`, [...(rows.get(`${r.route}:${r.id}`) ?? []), r]);
  const missing = 0;
  for (const x of sent) {
    if (!("status" in x.answer) || x.answer.status === 503) continue;
    const { status, body } = x.answer;
    const row = rows
      .get(`${x.route}:${x.id}`)
      ?.find((r) => r.status === status && r.outcome === String(body.status ?? body.error));
    if (row === undefined) {
      const stop = stops.find(([, , at]) => at >= x.at - 50 && at <= x.at + 200);
      // Answered after the kill was sent, or within a few ms before it (the rows of one sync's answers are
      // written once they have all left: a kill in between, or the process preempted there, loses them).
      if (stop !== undefined && stop[2] <= x.at + 5) {
        console.log(`  history: ${x.route} ${x.id} answered as the kill was sent: no row (allowed)`);
        continue;
      }
      problem(
        `history: ${x.route} ${x.id} answered ${status} ${String(x.answer.body.status)} at ${x.at} has no row (stop near: ${JSON.stringify(stop)}; rows ${JSON.stringify(rows.get(`${x.route}:${x.id}`))})`,
      );
    }
  }
  console.log(`history: ${history.length} records, ${missing} answered requests without their row`);
  // Other answers.
  const other = sent.filter((x) => "status" in x.answer && ![200, 202].includes(x.answer.status));
  if (other.length > 0)
    console.log(
      `other answers: ${JSON.stringify(other.slice(0, 5).map((x) => [x.route, x.id, x.answer]))} (${other.length})`,
    );
}

await main();
