/**
 * Sorts every busy sample of a `.cpuprofile` into one part of a request's work, so the parts add up to the
 * whole: first by the component the sample runs under (any frame of its stack: the journal, the delivery
 * history, the log, metrics, the run and its delivery), else by its innermost frame (the floor's own work —
 * HMAC, `JSON.parse`, the header copy, the answer's write — or svc's stages and their driver).
 */

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
  positionTicks?: { line: number; ticks: number }[];
}

export interface Part {
  readonly name: string;
  /** Work any receiver does (the floor handler does the same). */
  readonly floor: boolean;
}

const part = (name: string, floor = false): Part => ({ name, floor });

export const PARTS = {
  gc: part("garbage collection"),
  program: part("native, not attributed to JavaScript ((program))"),
  fdatasync: part("journal: fdatasync hand-off (and its kernel work on the same core)"),
  journalEncode: part("journal: record JSON.stringify + CRC-32"),
  journalWrite: part("journal: group commit (batch write, promises)"),
  history: part(
    "delivery history: request/run/delivery lines (the kept payload copied or escaped into its line)",
  ),
  log: part("log: the INFO line per run (pino, text line)"),
  runJournal: part("run journal line"),
  fileWrites: part("per-turn file/pipe writes (log file, stdout, history, run journal)"),
  metrics: part("metrics (prom-client histograms, counters)"),
  run: part("run queue, echo run, log delivery"),
  state: part("state: idempotency keys, live runs (maps)"),
  hmac: part("HMAC-SHA256 (node:crypto)", true),
  signatures: part("signature layer around the HMAC (scheme, hex decode, compare)"),
  jsonParse: part("JSON.parse of the body", true),
  numberScan: part("parseJson's scan that keeps large numbers exact"),
  headers: part("header copy (req.forEach, repeated-header check)", true),
  answer: part("answer write (status, headers, end in cork)", true),
  body: part("body read (chunk copy)", true),
  driver: part("RxJS and the stage driver (subscribers, maybeAsync, withCtx)"),
  stages: part("stages (route, events, filters, template, accept, ...)"),
  http: part("HTTP core (route lookup, outcome, answer text)"),
  other: part("other"),
} as const;

type Frame = ProfileNode["callFrame"];

const has = (f: Frame, path: string) => f.url.includes(path);

/** Component rules: the first whose file is anywhere on the stack wins. */
const COMPONENTS: readonly [Part, (f: Frame) => boolean][] = [
  [PARTS.fdatasync, (f) => f.functionName === "fdatasync"],
  [PARTS.journalEncode, (f) => has(f, "/state/journal/records.js")],
  [PARTS.journalWrite, (f) => has(f, "/state/journal/")],
  [PARTS.history, (f) => has(f, "/stores/deliveryHistory.js") || has(f, "/deliveryHistoryHooks.js")],
  [PARTS.log, (f) => has(f, "/dist/io/log.js") || has(f, "/node_modules/pino/")],
  [PARTS.runJournal, (f) => has(f, "/sessions/runJournal.js")],
  [PARTS.fileWrites, (f) => has(f, "/io/batchedWriter.js")],
  [PARTS.metrics, (f) => has(f, "/prom-client/") || has(f, "/io/metrics/") || has(f, "/runMetrics.js")],
  [
    PARTS.run,
    (f) =>
      has(f, "/actors/runs.js") ||
      has(f, "/actors/agent/") ||
      has(f, "/actors/deliver.js") ||
      has(f, "/io/targets/") ||
      has(f, "/gateway/runs.js"),
  ],
  [PARTS.state, (f) => has(f, "/dist/state/") || has(f, "/seenCache.js") || has(f, "/idempotencyRecord.js")],
];

const isOwn = (f: Frame) => f.url !== "";

/** The part of the innermost frame that has a file (natives such as `Hmac` take their caller's file). */
function innermostPart(stack: readonly Frame[]): Part {
  const leaf = stack[0] as Frame;
  if (leaf.url === "" && /^(Hmac|digest|update)$/.test(leaf.functionName)) return PARTS.hmac;
  const f = stack.find(isOwn);
  if (f === undefined) return PARTS.other;
  if (has(f, "node:internal/crypto")) return PARTS.hmac;
  if (has(f, "/signatures.js") || has(f, "/signatureChecks.js") || has(f, "/stages/auth.js"))
    return PARTS.signatures;
  if (has(f, "/io/http/uws.js")) {
    if (/^(send|writeCorked|answer|reply)$/.test(f.functionName)) return PARTS.answer;
    if (/^(chunk|read|add|body)$/.test(f.functionName)) return PARTS.body;
    return PARTS.headers;
  }
  if (has(f, "/io/http/core.js") && /HeaderLine|header/i.test(f.functionName)) return PARTS.headers;
  if (has(f, "/io/http/bodyCollector") || has(f, "node:buffer")) return PARTS.body;
  if (has(f, "/io/http/")) return PARTS.http;
  if (
    has(f, "/rxjs/") ||
    has(f, "/stages/maybeAsync.js") ||
    has(f, "/streams/pipeline.js") ||
    has(f, "/streams/context.js")
  )
    return PARTS.driver;
  if (has(f, "/streams/")) return PARTS.stages;
  return PARTS.other;
}

/** Which line of `parseJson` calls `JSON.parse`: its self samples there are the parse, the rest the scan. */
function parseShare(node: ProfileNode, parseLine: number | undefined): number {
  const ticks = node.positionTicks ?? [];
  const all = ticks.reduce((s, t) => s + t.ticks, 0);
  if (all === 0 || parseLine === undefined) return 0.5;
  return ticks.filter((t) => t.line === parseLine).reduce((s, t) => s + t.ticks, 0) / all;
}

/**
 * µs of busy time per part, over the samples from `first` to `last`. `parseLine` is the 1-based line of
 * `JSON.parse(text)` in `dist/streams/jsonNumbers/parse.js`.
 */
export function profileParts(
  prof: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] },
  first: number,
  last: number,
  parseLine: number | undefined,
): Map<Part, number> {
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfTime = new Map<number, number>();
  for (let i = Math.max(first, 0); i <= last; i++) {
    const id = prof.samples[i] as number;
    selfTime.set(id, (selfTime.get(id) ?? 0) + (prof.timeDeltas[i + 1] ?? 0));
  }
  const parts = new Map<Part, number>();
  const add = (p: Part, t: number) => parts.set(p, (parts.get(p) ?? 0) + t);
  for (const [id, t] of selfTime) {
    const node = byId.get(id) as ProfileNode;
    const name = node.callFrame.functionName;
    if (name === "(idle)") continue;
    if (name === "(garbage collector)") add(PARTS.gc, t);
    else if (name === "(program)") add(PARTS.program, t);
    else {
      const stack: Frame[] = [];
      for (let cur: ProfileNode | undefined = node; cur !== undefined; ) {
        stack.push(cur.callFrame);
        const p = parent.get(cur.id);
        cur = p === undefined ? undefined : byId.get(p);
      }
      const component = COMPONENTS.find(([, test]) => stack.some(test));
      if (component !== undefined) add(component[0], t);
      else if (node.callFrame.url.includes("/streams/jsonNumbers/parse.js") && name === "parseJson") {
        const share = parseShare(node, parseLine);
        add(PARTS.jsonParse, t * share);
        add(PARTS.numberScan, t * (1 - share));
      } else if (stack.some((f) => f.url.includes("/streams/jsonNumbers/"))) add(PARTS.numberScan, t);
      else add(innermostPart(stack), t);
    }
  }
  return parts;
}
