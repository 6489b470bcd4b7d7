/**
 * `node --import tsx bench/runPartsAb.ts <treeA> <treeB> [rounds]`: three small pieces of each accepted
 * request, two trees in one process, interleaved (`rounds`, default 12, each side once per round, the first
 * alternating). Each tree is a directory holding a compiled `dist/` (`node scripts/build.mjs`):
 * - metrics per run: `runFinished("ok", s)` + `deliveryAttempt("log")` (200,000 per round);
 * - the 202's text: `acceptedOutcome(event)` + `answerText` + `Buffer.byteLength`, a new delivery ID each (400,000);
 * - the time stamps of an event's log, history and run journal lines (five per event) at 4 and at 15 events
 *   per millisecond (300,000): `isoTime` where the tree has it (`dist/io/isoTime.js`), else what the
 *   writers did before it, a one-millisecond cache of `toISOString` each;
 * - the run queue: `take` + `finish` + `push` with 100 and with 50,000 runs waiting (a backlog);
 * - an echo run delivered to `log` (20,000 a round, one after another): the agent executor, the deliverer and
 *   the log target at INFO (svc's text logger writing to /dev/null), with metrics and a history end around
 *   it: `timedRuns` where the tree has it, else `timedRun` with a closure per run as the gateway made it;
 * - the log file's and run journal's writer (`createBatchedFileWriter` on /dev/null): 32 lines of ~420 bytes
 *   built as the log's lines are (a template of several parts), then the batch's write (200,000 lines);
 * - an event's delivery and run lines of the delivery history (`historyLine`, 4 events a millisecond; 200,000).
 * Prints each side's median ns per operation and the median of B/A over the rounds. Neighbouring slices share
 * the machine's load: on a shared machine the ratio holds where the absolute times do not.
 */
import { existsSync, mkdtempSync, rmSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [treeA, treeB, roundsArg] = process.argv.slice(2);
if (treeA === undefined || treeB === undefined) {
  process.stderr.write("usage: runPartsAb.ts <treeA> <treeB> [rounds]\n");
  process.exit(2);
}
const rounds = Number(roundsArg ?? 12);

// biome-ignore lint/suspicious/noExplicitAny: each tree's compiled modules, loaded by path
type Module = any;
const load = (tree: string, file: string): Promise<Module> =>
  import(pathToFileURL(join(resolve(tree), "dist", file)).href);

/** A one-millisecond cache of toISOString, as each writer kept before `isoTime`. */
function ownCache(): (ms: number) => string {
  let last = Number.NaN;
  let text = "";
  return (ms) => {
    if (ms !== last) {
      last = ms;
      text = new Date(ms).toISOString();
    }
    return text;
  };
}

async function side(tree: string) {
  const metrics = (await load(tree, "io/metrics/gatewayMetrics.js")).createGatewayMetrics({
    runs: () => ({ waiting: 0, active: 0 }),
    mcpStates: () => [],
    deliveryPlatforms: () => ["log"],
  });
  const { acceptedOutcome } = await load(tree, "streams/stages/dispatch.js");
  const { answerText } = await load(tree, "io/http/core.js");
  const shared = existsSync(join(resolve(tree), "dist/io/isoTime.js"))
    ? ((await load(tree, "io/isoTime.js")).isoTime as (ms: number) => string)
    : undefined;
  const [log, history, runJournal] =
    shared === undefined ? [ownCache(), ownCache(), ownCache()] : [shared, shared, shared];
  const { RunQueue } = await load(tree, "actors/runs.js");
  const queues = new Map<number, Module>();
  const queue = (waiting: number) => {
    let made = queues.get(waiting);
    if (made === undefined) {
      made = new RunQueue();
      for (let i = 0; i < waiting; i++) made.push({ deliveryId: `r${i}` });
      queues.set(waiting, made);
    }
    return made;
  };
  const { createRunExecutor } = await load(tree, "actors/agent/index.js");
  const { createDeliverer } = await load(tree, "actors/deliver.js");
  const { logTarget } = await load(tree, "io/targets/log.js");
  const runMetrics = await load(tree, "gateway/runMetrics.js");
  // The gateway's own text logger at INFO, its lines written to a file of this run's own. Never a path in
  // /dev: a tree from before 2026-12-04 20:10 UTC narrowed whatever it opened (and its directory) to 0600 and
  // 0700, which run as root closed /dev/null and /dev to every other user.
  const scratch = mkdtempSync(join(tmpdir(), "svc-runparts-"));
  process.once("exit", () => rmSync(scratch, { recursive: true, force: true }));
  const logger = (await load(tree, "io/log.js")).createLogger({
    level: "info",
    stdout: false,
    file: join(scratch, "logs", "gateway.log"),
  });
  const target = logTarget({ logger });
  const deliverer = createDeliverer({
    targets: { get: (name: string) => (name === "log" ? target : undefined), enabled: () => ["log"] },
    logger,
    paths: {},
    metrics,
    onOutcome: () => {},
  });
  const agentRun = createRunExecutor({
    runner: () => ({ run: async (request: { prompt: string }) => ({ text: request.prompt }) }),
    deliverer,
    logger,
    skillsDir: () => "/nonexistent",
  });
  const ended = { count: 0 };
  const now = () => performance.now();
  const timed =
    runMetrics.timedRuns === undefined
      ? (run: Module, signal: AbortSignal, slot: Module) =>
          runMetrics.timedRun(
            metrics,
            now,
            () => agentRun(run, signal, slot),
            () => {
              ended.count++;
            },
            signal,
          )
      : runMetrics.timedRuns(metrics, now, agentRun, () => {
          ended.count++;
        });
  const written = join(scratch, "written.log");
  const fileWriter = (await load(tree, "io/batchedWriter.js")).createBatchedFileWriter(
    written,
    0o600,
    () => {},
  );
  const { historyLine } = await load(tree, "io/stores/deliveryHistory.js");
  return {
    metrics,
    acceptedOutcome,
    answerText,
    log,
    history,
    runJournal,
    queue,
    timed,
    fileWriter,
    written,
    historyLine,
  };
}

const sides = [await side(treeA), await side(treeB)];
const ids = Array.from({ length: 4096 }, () => crypto.randomUUID());
let sink = 0;
let clockBase = Date.UTC(2026, 11, 4, 18, 0, 0, 0);

const pieces: [string, number, (s: Awaited<ReturnType<typeof side>>, n: number) => void | Promise<void>][] = [
  [
    "metrics per run",
    200_000,
    (s, n) => {
      for (let i = 0; i < n; i++) {
        s.metrics.runFinished("ok", (i % 97) / 50);
        s.metrics.deliveryAttempt("log");
      }
    },
  ],
  [
    "the 202's text",
    400_000,
    (s, n) => {
      for (let i = 0; i < n; i++) {
        const event = { routeName: "pr", event: "pull_request", deliveryId: ids[i & 4095] };
        sink += Buffer.byteLength(s.answerText(s.acceptedOutcome(event)));
      }
    },
  ],
  ...[4, 15].map(
    (perMs) =>
      [
        `time stamps per event, ${perMs} events/ms`,
        300_000,
        (s: Awaited<ReturnType<typeof side>>, n: number) => {
          clockBase += 1e7;
          for (let i = 0; i < n; i++) {
            const ms = clockBase + Math.floor(i / perMs);
            sink += s.log(ms).length + s.history(ms).length + s.history(ms).length + s.history(ms).length;
            sink += s.runJournal(ms).length;
          }
        },
      ] as [string, number, (s: Awaited<ReturnType<typeof side>>, n: number) => void],
  ),
  ...[100, 50_000].map(
    (waiting) =>
      [
        `run queue take + finish + push, ${waiting} waiting`,
        waiting > 10_000 ? 4_000 : 200_000,
        (s: Awaited<ReturnType<typeof side>>, n: number) => {
          const q = s.queue(waiting);
          const idle = () => {};
          for (let i = 0; i < n; i++) {
            const run = q.take(idle);
            q.finish(run);
            q.push(run);
          }
        },
      ] as [string, number, (s: Awaited<ReturnType<typeof side>>, n: number) => void],
  ),
];

const runSignal = new AbortController().signal;
const prompt = `PR #42 opened by octocat: ${"Fix the flaky retry in the webhook receiver. ".repeat(8)}`;
const echoRuns: [string, number, (s: Awaited<ReturnType<typeof side>>, n: number) => Promise<void>] = [
  "an echo run delivered to log",
  20_000,
  async (s, n) => {
    for (let i = 0; i < n; i++) {
      const run = {
        routeName: "pr",
        event: "pull_request",
        deliveryId: ids[i & 4095],
        prompt,
        profile: "default",
        route: { deliver: "log" },
        extra: {},
      };
      await s.timed(run, runSignal, undefined);
    }
  },
];
pieces.push(echoRuns as unknown as (typeof pieces)[number]);
pieces.push([
  "history: an event's delivery and run lines",
  200_000,
  (s, n) => {
    clockBase += 1e7;
    for (let i = 0; i < n; i++) {
      const at = (s.history as (ms: number) => string)(clockBase + (i >> 2));
      const id = ids[i & 4095] as string;
      sink += s.historyLine({
        kind: "delivery",
        id,
        at,
        route: "pr",
        platform: "log",
        outcome: "ok",
        error: undefined,
      }).length;
      sink += s.historyLine({ kind: "run", id, at, route: "pr", outcome: "ok", error: undefined }).length;
    }
  },
]);
pieces.push([
  "file writer, 32 lines a batch",
  200_000,
  (s, n) => {
    for (let i = 0; i < n; i++) {
      const id = ids[i & 4095] as string;
      s.fileWriter.write(
        `2026-12-04T19:00:00.${String(i % 1000).padStart(3, "0")}Z INFO [webhook] pr reply:\n  ${prompt} {"route":"pr","delivery_id":"${id}"}\n`,
      );
      if ((i & 31) === 31) s.fileWriter.flush();
    }
    s.fileWriter.flush();
    // Emptied after each slice (appends go on at its new end): ~220 MB a slice would fill the disk.
    truncateSync(s.written, 0);
  },
]);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
for (const [name, n, run] of pieces) {
  const times: number[][] = [[], []];
  const timed = async (which: 0 | 1) => {
    const start = process.hrtime.bigint();
    await run(sides[which] as Awaited<ReturnType<typeof side>>, n);
    (times[which] as number[]).push(Number(process.hrtime.bigint() - start) / n);
  };
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      await timed(0);
      await timed(1);
    } else {
      await timed(1);
      await timed(0);
    }
  }
  const [a, b] = times as [number[], number[]];
  const ratio = median(b.map((x, i) => x / (a[i] as number)));
  console.log(`${name}: A ${median(a).toFixed(0)} ns, B ${median(b).toFixed(0)} ns, B/A ${ratio.toFixed(3)}`);
}
if (sink === 0) console.log("(nothing measured)");
process.exit(0);
