/**
 * `bench/server.ts obligations <secret> <dir>`: the floor plus only what svc must do per request for the
 * bench's route, hand-written in plain code with no framework — the cheapest receiver that keeps svc's
 * documented promises for these three requests. Its row in `npm run bench` bounds what any implementation
 * of those promises can reach on this machine: where it is below a target, the target cannot be met
 * without dropping a promise.
 *
 * Per request, as svc does it (`docs/webhook.md`, `docs/durability.md`, `docs/operations.md`):
 * - every request: the route looked up, the headers copied, the HMAC checked in constant time, a request
 *   line in `deliveries/history.jsonl` (written once per turn), the request counter and the sum of request
 *   times (`/metrics`);
 * - 401: the answer with its `WWW-Authenticate`, its history line without payload;
 * - filter-ignored: the body checked as UTF-8 and parsed (looked at for integers past 2^53, which svc keeps
 *   exact), the event and the filter checked, the history line with the payload (checked not to hold the
 *   route's secret);
 * - accepted: the body parsed, the delivery id looked up and kept among the hour's (100,000 at most),
 *   the prompt rendered, the accepted run framed (`[length][CRC-32][JSON]`) into the turn's journal
 *   batch, one `write` + `fdatasync` per batch before its 202s (into a MiB of zeros grown ahead, as svc
 *   does); then the run (the echo agent), its INFO line to `gateway.log` and stdout, its delivery and run
 *   history lines, its run-journal line, and its finished record in the next batch.
 * What it leaves out: everything svc does that no promise needs for these requests (stages, operators, the
 * idempotency key's own record, metrics histograms, the run queue's concurrency), so it is a bound, not a
 * second implementation.
 */

import uWS from "uWebSockets.js";
import { isUtf8 } from "node:buffer";
import { createHmac, timingSafeEqual } from "node:crypto";
import { closeSync, fdatasync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { crc32 } from "node:zlib";

const ROUTE = "pr";
const EVENTS = new Set(["pull_request"]);
const ACTIONS = new Set(["opened", "synchronize", "reopened"]);
const SEEN_CAP = 100_000;
const q = JSON.stringify;
const LONG_INTEGER = /\d{16}/;

let isoMs = -1;
let isoText = "";
/** The ISO time, formatted once per millisecond. */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

/** Lines for one file, written with one `write` at the end of the turn. */
class TurnWriter {
  private lines = "";
  constructor(private readonly fd: number) {}
  add(line: string): void {
    this.lines += line;
  }
  flush(): void {
    if (this.lines === "") return;
    writeSync(this.fd, this.lines);
    this.lines = "";
  }
}

interface Waiting {
  res: uWS.HttpResponse;
  aborted: boolean;
  deliveryId: string;
  prompt: string;
  historyLine: string;
  started: number;
}

export function startObligations(secret: string, dir: string, onListening: (port: number) => void): void {
  for (const sub of ["logs", "deliveries", "state", "sessions"])
    mkdirSync(join(dir, sub), { recursive: true });
  const open = (path: string) => openSync(join(dir, path), "a", 0o600);
  const history = new TurnWriter(open("deliveries/history.jsonl"));
  const log = new TurnWriter(open("logs/gateway.log"));
  const stdout = new TurnWriter(1);
  const runs = new TurnWriter(open("sessions/runs.jsonl"));
  // Grown a MiB of zeros ahead of its records, as svc grows its segments: the syncs then change neither the
  // file's size nor its blocks.
  const journalFd = openSync(join(dir, "state/journal-000001.seg"), "w", 0o600);
  const zeros = Buffer.alloc(1024 * 1024);
  let journalBytes = 0;
  let journalGrownTo = 0;
  const seen = new Map<string, number>();
  const secretBytes = Buffer.from(secret);
  const counters = { requests401: 0, ignored: 0, accepted: 0, runs: 0, requestSeconds: 0 };
  const timed = (started: number) => {
    counters.requestSeconds += (performance.now() - started) / 1000;
  };

  let batch = Buffer.allocUnsafe(64 * 1024);
  let batchUsed = 0;
  let batchWaiting: Waiting[] = [];
  let syncing = false;
  let flushScheduled = false;

  function frame(text: string): void {
    const most = batchUsed + 8 + text.length * 3;
    if (most > batch.length) {
      const grown = Buffer.allocUnsafe(Math.max(most, 2 * batch.length));
      batch.copy(grown, 0, 0, batchUsed);
      batch = grown;
    }
    const length = batch.write(text, batchUsed + 8, "utf8");
    batch.writeUInt32LE(length, batchUsed);
    batch.writeUInt32LE(crc32(text), batchUsed + 4);
    batchUsed += 8 + length;
  }

  /** The run after its 202: the echo agent answers with the prompt, delivered to the log. */
  function run(w: Waiting): void {
    const at = isoNow();
    const ids = `{"route":${q(ROUTE)},"delivery_id":${q(w.deliveryId)}}`;
    const line = `${at} INFO [webhook] ${ROUTE} reply:\n  ${w.prompt} ${ids}\n`;
    log.add(line);
    stdout.add(line);
    history.add(w.historyLine);
    history.add(
      `{"kind":"delivery","id":${q(w.deliveryId)},"at":"${at}","route":"${ROUTE}","platform":"log","outcome":"ok"}\n`,
    );
    history.add(`{"kind":"run","id":${q(w.deliveryId)},"at":"${at}","route":"${ROUTE}","outcome":"ok"}\n`);
    const prompt = q(w.prompt);
    runs.add(
      `{"key":${q(`webhook:${ROUTE}:${w.deliveryId}`)},"route":"${ROUTE}","delivery_id":${q(w.deliveryId)},"at":"${at}","entries":[{"role":"user","content":${prompt},"at":"${at}"},{"role":"assistant","content":${prompt},"at":"${at}"}]}\n`,
    );
    frame(`{"t":"f","k":${q(`${ROUTE}\u0000${w.deliveryId}`)}}`);
    counters.runs += 1;
    scheduleFlush();
  }

  function flushTurn(): void {
    flushScheduled = false;
    history.flush();
    log.flush();
    stdout.flush();
    runs.flush();
    if (syncing || batchUsed === 0) return;
    writeSync(journalFd, batch, 0, batchUsed, journalBytes);
    journalBytes += batchUsed;
    if (journalGrownTo - journalBytes < zeros.length / 2) {
      const from = Math.max(journalGrownTo, journalBytes);
      journalGrownTo = journalBytes + zeros.length;
      writeSync(journalFd, zeros, 0, journalGrownTo - from, from);
    }
    batchUsed = 0;
    const answered = batchWaiting;
    batchWaiting = [];
    syncing = true;
    fdatasync(journalFd, (error) => {
      syncing = false;
      if (error) throw error;
      for (const w of answered) {
        if (!w.aborted) {
          const body = `{"status":"accepted","route":"${ROUTE}","event":"pull_request","delivery_id":${q(w.deliveryId)}}`;
          w.res.cork(() => {
            w.res.writeStatus("202 Accepted").writeHeader("Content-Type", "application/json").end(body);
          });
          timed(w.started);
        }
        run(w);
      }
      if (batchUsed > 0) scheduleFlush();
    });
  }

  function scheduleFlush(): void {
    if (flushScheduled) return;
    flushScheduled = true;
    setImmediate(flushTurn);
  }

  function answer(res: uWS.HttpResponse, status: string, body: string, extra?: [string, string]): void {
    res.cork(() => {
      res.writeStatus(status).writeHeader("Content-Type", "application/json");
      if (extra !== undefined) res.writeHeader(extra[0], extra[1]);
      res.end(body);
    });
  }

  // BENCH_BOUND_SPIN_US: a busy wait of that many µs per request, making the bound as slow as another server
  // (to see which of its costs follow its speed: the kernel's part of each answer's send does).
  const spinMs = Number(process.env.BENCH_BOUND_SPIN_US ?? 0) / 1000;
  const app = uWS.App();
  app.post("/webhooks/:route", (res, req) => {
    if (spinMs > 0) for (const until = performance.now() + spinMs; performance.now() < until; );
    if (req.getParameter(0) !== ROUTE) {
      res.writeStatus("404 Not Found").end('{"error":"Unknown route"}');
      return;
    }
    const started = performance.now();
    const headers: Record<string, string> = {};
    req.forEach((key, value) => {
      headers[key] = value;
    });
    const waiting: Waiting = { res, aborted: false, deliveryId: "", prompt: "", historyLine: "", started };
    res.onAborted(() => {
      waiting.aborted = true;
    });
    const chunks: Buffer[] = [];
    res.onData((chunk, isLast) => {
      chunks.push(Buffer.from(Buffer.from(chunk)));
      if (!isLast || waiting.aborted) return;
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      const deliveryId = headers["x-github-delivery"] ?? "";
      const event = headers["x-github-event"] ?? "";
      const head = `{"kind":"request","id":${q(deliveryId)},"at":"${isoNow()}","route":"${ROUTE}"`;
      const sent = Buffer.from((headers["x-hub-signature-256"] ?? "").slice("sha256=".length), "hex");
      const expected = createHmac("sha256", secret).update(body).digest();
      if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) {
        counters.requests401 += 1;
        history.add(
          `${head},"status":401,"outcome":"Invalid signature","reason":"x-hub-signature-256 does not match","event":${q(event)},"event_header":"x-github-event","content_type":${q(headers["content-type"] ?? "")},"payload_omitted":"not_accepted"}\n`,
        );
        scheduleFlush();
        timed(started);
        answer(res, "401 Unauthorized", '{"error":"Invalid signature"}', [
          "WWW-Authenticate",
          'Basic realm="svc", charset="UTF-8"',
        ]);
        return;
      }
      const text = body.toString("utf8");
      let payload: Record<string, any>;
      try {
        if (!isUtf8(body)) throw new Error("not UTF-8");
        payload = JSON.parse(text);
        // Integers past 2^53 would be re-read exactly (svc's scan); here only looked for.
        if (LONG_INTEGER.test(text)) payload = JSON.parse(text);
      } catch {
        answer(res, "400 Bad Request", '{"error":"Invalid JSON"}');
        return;
      }
      // The payload is kept as the sender sent it: raw when it is one line, else as a JSON string; the
      // route's secret is looked for in it (this bench's body holds none, so nothing is redacted).
      if (body.includes(secretBytes)) throw new Error("the bench's body holds the route's secret");
      const kept =
        body.indexOf(10) === -1 ? `"payload_encoding":"json","payload":${text}` : `"payload":${q(text)}`;
      const tail = `,"event":${q(event)},"event_header":"x-github-event","content_type":${q(headers["content-type"] ?? "")},${kept}}\n`;
      if (!EVENTS.has(event) || !ACTIONS.has(payload.action)) {
        counters.ignored += 1;
        history.add(`${head},"status":200,"outcome":"ignored","reason":"filter action did not match"${tail}`);
        scheduleFlush();
        timed(started);
        answer(res, "200 OK", '{"status":"ignored","reason":"filter"}');
        return;
      }
      const key = `${ROUTE}\u0000${deliveryId}`;
      if (seen.has(key)) {
        answer(res, "200 OK", `{"status":"duplicate","delivery_id":${q(deliveryId)}}`);
        return;
      }
      if (seen.size >= SEEN_CAP) seen.delete(seen.keys().next().value as string);
      const now = Date.now();
      seen.set(key, now);
      counters.accepted += 1;
      waiting.deliveryId = deliveryId;
      waiting.prompt = `Review PR #${payload.number} ${payload.pull_request?.title} by ${payload.pull_request?.user?.login} in ${payload.repository?.full_name}`;
      waiting.historyLine = `${head},"status":202,"outcome":"accepted"${tail}`;
      frame(
        `{"t":"a","run":{"profile":"default","routeName":"${ROUTE}","event":${q(event)},"deliveryId":${q(deliveryId)},"prompt":${q(waiting.prompt)},"extra":{},"receivedAt":${now}},"at":${now}}`,
      );
      batchWaiting.push(waiting);
      scheduleFlush();
    });
  });
  app.listen("127.0.0.1", 0, (socket) => {
    if (!socket) throw new Error("obligations server cannot listen");
    onListening(uWS.us_socket_local_port(socket));
  });
  process.on("exit", () => closeSync(journalFd));
}
