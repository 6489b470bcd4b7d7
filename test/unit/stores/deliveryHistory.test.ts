import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createHistoryWriter,
  decodePayload,
  encodePayload,
  HISTORY_PAYLOAD_BYTES,
  HISTORY_RETENTION_MS,
  type HistoryRecord,
  historyLine,
  type RequestRecord,
  readHistory,
  recordOf,
  summarizeHistory,
} from "../../../src/io/stores/deliveryHistory.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

const T0 = Date.parse("2026-11-20T10:00:00Z");
const request = (id: string, at: number, extra: Partial<RequestRecord> = {}): RequestRecord => ({
  kind: "request",
  id,
  at: new Date(at).toISOString(),
  route: "pr",
  status: 202,
  outcome: "accepted",
  ...extra,
});

describe("delivery history store", () => {
  it("appends JSON lines (0600), rotates past the size cap keeping one previous file, and skips a cut line", () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    const writer = createHistoryWriter(
      dir,
      (err) => {
        throw err;
      },
      () => T0,
      300,
    );
    for (let i = 0; i < 10; i++) writer.record(request(`d-${i}`, T0));
    writer.close();
    expect(statSync(join(dir, "history.jsonl")).mode & 0o777).toBe(0o600);
    // One batch per turn: all ten were written in one batch, so the cap applies at the next batch.
    const again = createHistoryWriter(
      dir,
      (err) => {
        throw err;
      },
      () => T0,
      300,
    );
    again.record(request("d-10", T0));
    again.close();
    expect(existsSync(join(dir, "history.1.jsonl"))).toBe(true);
    expect(readFileSync(join(dir, "history.jsonl"), "utf8").trim().split("\n")).toHaveLength(1);
    home.write(
      "deliveries/history.jsonl",
      `${readFileSync(join(dir, "history.jsonl"), "utf8")}{"kind":"requ`,
    );
    expect(readHistory(dir, T0).map((r) => r.id)).toEqual([
      ...Array.from({ length: 10 }, (_, i) => `d-${i}`),
      "d-10",
    ]);
  });

  it("a reader the gateway's rotation comes between the reads of the two files still gets one generation whole", () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    const rethrow = (err: unknown) => {
      throw err;
    };
    // Each writer's records go out in one batch at its close; past 300 bytes the next batch rotates.
    const write = (ids: readonly string[]) => {
      const writer = createHistoryWriter(dir, rethrow, () => T0, 300);
      for (const id of ids) writer.record(request(id, T0));
      writer.close();
    };
    const ids = (prefix: string) => Array.from({ length: 5 }, (_, i) => `${prefix}-${i}`);
    write(ids("a"));
    write(["b-0"]);
    write(ids("b").slice(1));
    // history.1.jsonl holds a-*, history.jsonl b-*: the next record rotates, as the gateway's next batch
    // would while `svc webhook deliveries` has read history.1.jsonl and not yet history.jsonl.
    const gateway = createHistoryWriter(dir, rethrow, () => T0, 300);
    let rotated = false;
    const readThenRotate = (path: string) => {
      const text = readFileSync(path, "utf8");
      if (path.endsWith("history.1.jsonl") && !rotated) {
        rotated = true;
        gateway.record(request("c-0", T0));
        gateway.close();
      }
      return text;
    };
    expect(readHistory(dir, T0, readThenRotate).map((r) => r.id)).toEqual([...ids("b"), "c-0"]);
  });

  it("ends a line a crash cut short before appending: the first record after a restart is not glued to it", () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    home.write("deliveries/history.jsonl", `${historyLine(request("before", T0))}\n{"kind":"requ`);
    const writer = createHistoryWriter(
      dir,
      (err) => {
        throw err;
      },
      () => T0,
    );
    writer.record(request("after", T0));
    writer.close();
    expect(readHistory(dir, T0).map((r) => r.id)).toEqual(["before", "after"]);
  });

  it("starts a new file within a second when its file is removed or renamed away while it runs", async () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    let t = T0;
    const writer = createHistoryWriter(
      dir,
      (err) => {
        throw err;
      },
      () => t,
    );
    const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
    writer.record(request("a", T0));
    await turn();
    // Cleared by hand: records written to the removed file would never be read.
    rmSync(join(dir, "history.jsonl"));
    t += 1000;
    writer.record(request("b", T0));
    await turn();
    expect(readHistory(dir, T0).map((r) => r.id)).toEqual(["b"]);
    expect(statSync(join(dir, "history.jsonl")).mode & 0o777).toBe(0o600);
    // Renamed away (logrotate's default): the old lines stay there, new ones go to a new file.
    renameSync(join(dir, "history.jsonl"), join(dir, "history.jsonl.bak"));
    writer.record(request("c", T0)); // within the second: not looked at yet
    await turn();
    t += 1000;
    writer.record(request("d", T0));
    writer.close();
    expect(readFileSync(join(dir, "history.jsonl.bak"), "utf8")).toContain('"id":"c"');
    expect(readHistory(dir, T0).map((r) => r.id)).toEqual(["d"]);
  });

  it("a clock set back (an NTP step) does not put off the look at a renamed-away file until it comes round again", async () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    let t = T0;
    const writer = createHistoryWriter(
      dir,
      (err) => {
        throw err;
      },
      () => t,
    );
    const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
    writer.record(request("a", T0));
    await turn();
    t -= 3_600_000;
    renameSync(join(dir, "history.jsonl"), join(dir, "history.jsonl.bak"));
    t += 1000;
    writer.record(request("b", T0));
    writer.close();
    expect(readFileSync(join(dir, "history.jsonl.bak"), "utf8")).not.toContain('"id":"b"');
    expect(readHistory(dir, T0).map((r) => r.id)).toEqual(["b"]);
  });

  it("after a reopen that failed, never touches the closed descriptor's number (another file's by then)", async () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    let t = T0;
    const errors: unknown[] = [];
    const writer = createHistoryWriter(
      dir,
      (err) => errors.push(err),
      () => t,
    );
    const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
    writer.record(request("a", T0));
    await turn();
    // A file in the directory's place: the reopen fails, the held descriptor is closed.
    rmSync(dir, { recursive: true });
    writeFileSync(dir, "not a directory");
    t += 1000;
    writer.record(request("lost", T0));
    await turn();
    const other = openSync(join(home.dir, "other.txt"), "w"); // the lowest free number: the closed one
    try {
      t += 1000;
      writer.record(request("lost too", T0));
      await turn();
      writeSync(other, "mine\n");
      expect(readFileSync(join(home.dir, "other.txt"), "utf8")).toBe("mine\n");
      expect(errors.length).toBeGreaterThan(0);
      rmSync(dir);
      t += 1000;
      writer.record(request("back", T0));
      writer.close();
      expect(readHistory(dir, T0).map((r) => r.id)).toEqual(["back"]);
    } finally {
      closeSync(other);
    }
  });

  it("a history directory it cannot open refuses the start with what to do (not a bare EEXIST)", () => {
    home = tempHome();
    home.write("deliveries", "a file where the directory goes");
    expect(() => createHistoryWriter(join(home.dir, "deliveries"), () => {})).toThrow(
      /deliveries: the delivery history cannot be opened \(EEXIST.*\) — make it a directory this user can write .*or set platforms\.webhook\.delivery_history: false$/,
    );
  });

  it("narrows a directory and files that already existed wider to 0700 and 0600: they hold payloads", () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    for (const name of ["history.jsonl", "history.1.jsonl"]) {
      writeFileSync(join(dir, name), "");
      chmodSync(join(dir, name), 0o644);
    }
    const writer = createHistoryWriter(
      dir,
      (err) => {
        throw err;
      },
      () => T0,
    );
    writer.record(request("d-1", T0));
    writer.close();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "history.jsonl")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "history.1.jsonl")).mode & 0o777).toBe(0o600);
  });

  it("sets the file a rotation replaces aside and removes it on the thread pool; a start removes what a stop left", async () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    const errors: unknown[] = [];
    const writer = createHistoryWriter(
      dir,
      (err) => errors.push(err),
      () => T0,
      300,
    );
    const generation = (n: number) => Array.from({ length: 5 }, (_, i) => `g${n}-${i}`);
    const replaced = () => readdirSync(dir).filter((name) => name.startsWith(".history-replaced-"));
    // A batch is written at the end of its turn: the turn after a batch sees it written.
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    for (const n of [0, 1]) {
      for (const id of generation(n)) writer.record(request(id, T0));
      await nextTurn();
    }
    // Generation 2 rotates again: history.1.jsonl (generation 0) is replaced.
    for (const id of generation(2)) writer.record(request(id, T0));
    await nextTurn();
    // Still there in the phase of the event loop that wrote the batch: its removal runs on the thread pool.
    const aside = replaced();
    expect(aside).toHaveLength(1);
    expect(readFileSync(join(dir, aside[0] as string), "utf8")).toContain('"id":"g0-4"');
    await vi.waitFor(() => expect(replaced()).toEqual([]));
    writer.close();
    expect(readHistory(dir, T0).map((r) => r.id)).toEqual([...generation(1), ...generation(2)]);
    expect(errors).toEqual([]);

    home.write("deliveries/.history-replaced-4242-0.jsonl", "left by a stopped gateway\n");
    createHistoryWriter(
      dir,
      (err) => errors.push(err),
      () => T0,
      300,
    ).close();
    expect(replaced()).toEqual([]);
    expect(readHistory(dir, T0)).toHaveLength(10);
  });

  it("records past the retention are not read, and a file holding only such records is removed at start", () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    const writer = createHistoryWriter(
      dir,
      () => {},
      () => T0,
    );
    writer.record(request("old", T0 - HISTORY_RETENTION_MS - 1000));
    writer.record(request("new", T0));
    writer.close();
    expect(readHistory(dir, T0).map((r) => r.id)).toEqual(["new"]);
    const old = (T0 - HISTORY_RETENTION_MS - 60_000) / 1000;
    utimesSync(join(dir, "history.jsonl"), old, old);
    createHistoryWriter(
      dir,
      () => {},
      () => T0,
    ).close();
    expect(readHistory(dir, T0)).toEqual([]);
  });

  it("writes each record as the line JSON.stringify gives for it, whatever its strings hold", () => {
    // Deterministic pseudo-random records: every optional field present or not (undefined), strings with
    // quotes, backslashes, control characters, non-ASCII, lone surrogates and U+2028.
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const alphabet = [
      '"',
      "\\",
      "\n",
      "\u0001",
      "\u001f",
      "é",
      "✓",
      "\ud800",
      "\u2028",
      "a",
      "Z",
      "0",
      " ",
      "/",
      "<",
    ];
    const text = () => Array.from({ length: rand(12) }, () => alphabet[rand(alphabet.length)]).join("");
    const maybe = () => (rand(2) === 0 ? undefined : text());
    // Fields repeat from record to record, as an event's three lines share theirs (kept from the last line).
    const ids = Array.from({ length: 3 }, text);
    const routes = Array.from({ length: 3 }, text);
    const events = Array.from({ length: 3 }, text);
    // A request's status, outcome, reason, event, event header and content type repeat too (a route's
    // ignored requests share them): a line's text made for one value is never given for another, nor for none.
    const pick = (pool: readonly string[]) => (rand(2) === 0 ? text() : (pool[rand(pool.length)] as string));
    const maybePick = (pool: readonly string[]) => (rand(3) === 0 ? undefined : pick(pool));
    const outcomes = ["ignored", "accepted", ...Array.from({ length: 2 }, text)];
    const reasons = ["filter action did not match", ...Array.from({ length: 2 }, text)];
    const contentTypes = ["application/json", ...Array.from({ length: 2 }, text)];
    const eventHeaders = ["x-github-event", "body", text()];
    for (let i = 0; i < 2000; i++) {
      const base = {
        id: rand(2) === 0 ? text() : (ids[rand(3)] as string),
        at: new Date(T0 + (i >> rand(3))).toISOString(),
        route: rand(2) === 0 ? text() : (routes[rand(3)] as string),
      };
      const kind = rand(3);
      const record: HistoryRecord =
        kind === 0
          ? {
              kind: "request",
              ...base,
              status: [200, 202, 401, 413, 429][rand(5)] as number,
              outcome: pick(outcomes),
              reason: maybePick(reasons),
              event: maybePick(events),
              event_header: maybePick(eventHeaders),
              redelivery_of: maybe(),
              content_type: maybePick(contentTypes),
              payload: maybe(),
              payload_encoding: rand(2) === 0 ? undefined : "utf8",
              payload_omitted: rand(2) === 0 ? undefined : "not_accepted",
            }
          : kind === 1
            ? {
                kind: "run",
                ...base,
                outcome: rand(2) === 0 ? "ok" : "failed",
                event: rand(3) === 0 ? undefined : rand(2) === 0 ? text() : events[rand(3)],
                received_at: rand(3) === 0 ? undefined : T0 - rand(1000),
                error: maybe(),
              }
            : {
                kind: "delivery",
                ...base,
                platform: rand(2) === 0 ? "log" : text(),
                outcome: rand(2) === 0 ? "ok" : "failed",
                error: maybe(),
              };
      expect(historyLine(record)).toBe(JSON.stringify(record));
    }
  });

  it("keeps payloads byte for byte (UTF-8 text, else base64) up to the cap", () => {
    const text = Buffer.from('{"title":"é ✓"}');
    const binary = Buffer.from([0xff, 0x00, 0x80]);
    expect(encodePayload(text)).toEqual({ payload: '{"title":"é ✓"}', payload_encoding: "utf8" });
    expect(decodePayload(request("a", T0, encodePayload(binary)))?.equals(binary)).toBe(true);
    expect(encodePayload(Buffer.alloc(HISTORY_PAYLOAD_BYTES + 1))).toEqual({ payload_omitted: "too_large" });
  });

  it("writes a body parsed as a JSON object unescaped, reads it back byte for byte, and keeps every line valid JSON", () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    const bodies = [
      '{"title":"é ✓ \\"quoted\\" \\u2028","n":1.0,"id":12345678901234567890}',
      '{ "spaced" : [ 1 , {"a":"b"} ] , "tab":\t"x" }',
      '{"payload":"looks like the key","payload_encoding":"utf8"}',
      "{}",
    ].map((b) => Buffer.from(b));
    // Not stored as JSON: a line break between tokens, a byte order mark, a body not parsed as JSON itself.
    const lineBreak = Buffer.from('{"a":1,\n"b":2}');
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]);
    const form = Buffer.from('{"x":1}&payload={"a":1}');
    const writer = createHistoryWriter(
      dir,
      (err) => {
        throw err;
      },
      () => T0,
    );
    const cases: Array<[Buffer, boolean, string]> = [
      ...bodies.map((b): [Buffer, boolean, string] => [b, true, "json"]),
      [lineBreak, true, "utf8"],
      [bom, true, "utf8"],
      [form, false, "utf8"],
    ];
    for (const [i, [body, parsed]] of cases.entries()) {
      const { json, ...fields } = encodePayload(body, parsed);
      writer.record(request(`p-${i}`, T0, { content_type: "application/json", ...fields }), json);
    }
    writer.record({ kind: "run", id: "p-0", at: new Date(T0).toISOString(), route: "pr", outcome: "ok" });
    writer.close();

    const lines = readFileSync(join(dir, "history.jsonl"), "utf8").trim().split("\n");
    expect(lines).toHaveLength(cases.length + 1);
    // Any JSON-lines reader (jq, a script) reads each line; the unescaped payload is its JSON value there.
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed[0]?.payload).toEqual(JSON.parse(bodies[0]?.toString() as string));
    expect(lines[0]).toContain(`"payload_encoding":"json","payload":${bodies[0]?.toString()}}`);
    const read = readHistory(dir, T0).filter((r): r is RequestRecord => r.kind === "request");
    expect(read.map((r) => r.payload_encoding)).toEqual(cases.map(([, , encoding]) => encoding));
    read.forEach((record, i) => {
      expect(record).toMatchObject({ id: `p-${i}`, content_type: "application/json" });
      expect(decodePayload(record)?.equals(cases[i]?.[0] as Buffer)).toBe(true);
    });
  });

  it("keeps a record's request headers as pairs before a JSON payload, a header named payload too", () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    const writer = createHistoryWriter(
      dir,
      (err) => {
        throw err;
      },
      () => T0,
    );
    const body = Buffer.from('{"order":41,"payload":"inner"}');
    const { json, ...fields } = encodePayload(body, true);
    const headers = [
      ["x-tenant-name", "acme-north-7"],
      ["payload", "a header named payload"],
    ] as const;
    writer.record(request("h-1", T0, { headers, ...fields }), json);
    writer.close();
    const [record] = readHistory(dir, T0) as RequestRecord[];
    expect(record?.headers).toEqual(headers);
    expect(decodePayload(record as RequestRecord)?.equals(body)).toBe(true);
  });

  it("summaries: newest first, each request with its run and delivery", () => {
    const summary = summarizeHistory([
      request("a", T0),
      request("a", T0 + 1, { status: 200, outcome: "duplicate" }),
      { kind: "run", id: "a", at: new Date(T0 + 2).toISOString(), route: "pr", outcome: "ok" },
      {
        kind: "delivery",
        id: "a",
        at: new Date(T0 + 3).toISOString(),
        route: "pr",
        platform: "log",
        outcome: "ok",
      },
    ]);
    expect(summary.map((s) => [s.request?.outcome, s.run?.outcome, s.delivery?.platform])).toEqual([
      ["duplicate", undefined, undefined],
      ["accepted", "ok", "log"],
    ]);
  });

  it("summaries: a refused request sharing its delivery ID with the retry that was delivered shows no delivery", () => {
    const delivered = (id: string, at: number) => ({
      kind: "delivery" as const,
      id,
      at: new Date(at).toISOString(),
      route: "pr",
      platform: "telegram",
      outcome: "ok" as const,
    });
    const summary = summarizeHistory([
      request("a", T0, { status: 401, outcome: "Invalid signature" }),
      request("a", T0 + 1, { status: 503, outcome: "Agent run queue is full, retry later" }),
      request("a", T0 + 2),
      delivered("a", T0 + 3),
      request("d", T0 + 4, { status: 429, outcome: "Rate limit exceeded" }),
      request("d", T0 + 5, { status: 502, outcome: "Delivery failed" }),
      { ...delivered("d", T0 + 6), outcome: "failed" as const },
    ]);
    expect(summary.map((s) => [s.request?.status, s.delivery?.outcome])).toEqual([
      [502, "failed"],
      [429, undefined],
      [202, "ok"],
      [503, undefined],
      [401, undefined],
    ]);
  });

  it("summaries: a failed direct delivery and the sender's retry under the same ID each show their own delivery", () => {
    const delivery = (outcome: "ok" | "failed", at: number) => ({
      kind: "delivery" as const,
      id: "z9",
      at: new Date(at).toISOString(),
      route: "pr",
      platform: "telegram",
      outcome,
    });
    const run = (outcome: "ok" | "failed", at: number) => ({
      kind: "run" as const,
      id: "g1",
      at: new Date(at).toISOString(),
      route: "pr",
      outcome,
    });
    // As the gateway writes them: a direct delivery's record comes just before its answer's.
    const summary = summarizeHistory([
      delivery("failed", T0),
      request("z9", T0 + 1, { status: 502, outcome: "Delivery failed" }),
      delivery("ok", T0 + 2),
      request("z9", T0 + 3, { status: 200, outcome: "delivered" }),
      // The same ID accepted again once its idempotency hour was over (GitHub's Redeliver keeps the ID).
      request("g1", T0 + 4),
      run("failed", T0 + 5),
      request("g1", T0 + 6 + 3_600_000),
      run("ok", T0 + 7 + 3_600_000),
    ]);
    expect(
      summary.map((s) => [s.request?.id, s.request?.status, s.run?.outcome, s.delivery?.outcome]),
    ).toEqual([
      ["g1", 202, "ok", undefined],
      ["g1", 202, "failed", undefined],
      ["z9", 200, undefined, "ok"],
      ["z9", 502, undefined, "failed"],
    ]);
  });

  it("summaries: a run and delivery recorded before their accepted request's line still show on it", () => {
    const summary = summarizeHistory([
      { kind: "run", id: "q", at: new Date(T0).toISOString(), route: "pr", outcome: "ok" },
      {
        kind: "delivery",
        id: "q",
        at: new Date(T0).toISOString(),
        route: "pr",
        platform: "log",
        outcome: "ok",
      },
      request("q", T0 + 1),
    ]);
    expect(summary.map((s) => [s.request?.outcome, s.run?.outcome, s.delivery?.platform])).toEqual([
      ["accepted", "ok", "log"],
    ]);
  });

  it("summaries: a run no request here leads to (its request answered by another instance) shows as a row of its own with its delivery, where it was recorded; a scheduled cron run's delivery does not", () => {
    const at = (ms: number) => new Date(ms).toISOString();
    const summary = summarizeHistory([
      request("mine", T0),
      { kind: "delivery", id: "theirs", at: at(T0 + 1), route: "pr", platform: "log", outcome: "ok" },
      { kind: "run", id: "theirs", at: at(T0 + 2), route: "pr", outcome: "ok" },
      { kind: "run", id: "mine", at: at(T0 + 3), route: "pr", outcome: "failed" },
      // A scheduled cron run's delivery: no request, no run record.
      {
        kind: "delivery",
        id: "cron-j1-1",
        at: at(T0 + 4),
        route: "cron:nightly",
        platform: "log",
        outcome: "ok",
      },
    ]);
    expect(summary.map((s) => [s.id, s.at, s.request?.status, s.run?.outcome, s.delivery?.platform])).toEqual(
      [
        ["theirs", at(T0 + 1), undefined, "ok", "log"],
        ["mine", at(T0), 202, "failed", undefined],
      ],
    );
  });
});

describe("a run's event type", () => {
  it("is kept on its run's line, so a run whose request another instance answered shows it; a run line an older svc wrote, without one, still reads", () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    const at = new Date(T0).toISOString();
    home.write(
      "deliveries/history.jsonl",
      `${JSON.stringify({ kind: "run", id: "older", at, route: "pr", outcome: "ok" })}\n`,
    );
    const writer = createHistoryWriter(
      dir,
      () => {},
      () => T0,
    );
    writer.record({ kind: "run", id: "theirs", at, route: "pr", outcome: "ok", event: "pull_request" });
    writer.record({ kind: "run", id: "unnamed", at, route: "pr", outcome: "failed", error: "boom" });
    writer.close();
    expect(readFileSync(join(dir, "history.jsonl"), "utf8").split("\n")[1]).toBe(
      `{"kind":"run","id":"theirs","at":"${at}","route":"pr","outcome":"ok","event":"pull_request"}`,
    );
    expect(summarizeHistory(readHistory(dir, T0)).map((s) => [s.id, s.request, s.run?.event])).toEqual([
      ["unnamed", undefined, undefined],
      ["theirs", undefined, "pull_request"],
      ["older", undefined, undefined],
    ]);
    // A line edited into another type for it is skipped, as any field of another type is.
    expect(
      recordOf(JSON.stringify({ kind: "run", id: "x", at, route: "pr", outcome: "ok", event: 5 }), T0),
    ).toBeUndefined();
    // So is a run whose request's receive time is no number; one that is a number is read with it.
    const run = { kind: "run", id: "x", at, route: "pr", outcome: "ok" };
    expect(recordOf(JSON.stringify({ ...run, received_at: "soon" }), T0)).toBeUndefined();
    expect(recordOf(JSON.stringify({ ...run, received_at: T0 - 9 }), T0)).toMatchObject({
      received_at: T0 - 9,
    });
  });
});

describe("reading a delivery history this user cannot read", () => {
  it("is refused naming the file and the user to run as, not read as no history (the gateway's files are 0600 in a 0700 directory)", () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    // A command run by another user than the gateway's: the directory cannot be searched (EACCES).
    const denied = (path: string): string => {
      throw Object.assign(new Error(`EACCES: permission denied, open '${path}'`), { code: "EACCES" });
    };
    expect(() => readHistory(dir, T0, denied)).toThrow(
      `${dir}: this user may not read the delivery history (permission denied) — the gateway keeps it readable by the user it runs as only (mode 0600 in a 0700 directory: it holds payloads), so run the command as that user (sudo -u <that user> svc ...)`,
    );
  });

  it("a directory in a file's place is named with what to do; no files at all is no history", () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    expect(readHistory(dir, T0)).toEqual([]);
    mkdirSync(join(dir, "history.jsonl"), { recursive: true });
    expect(() => readHistory(dir, T0)).toThrow(
      `${join(dir, "history.jsonl")}: the delivery history cannot be read (EISDIR: illegal operation on a directory, read) — move away what is in its place: the gateway writes its history there`,
    );
  });
});
