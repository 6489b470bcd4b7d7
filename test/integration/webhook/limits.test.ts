import { execFile } from "node:child_process";
import { createHmac } from "node:crypto";
import { connect } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import {
  HTTP_SERVERS,
  inHome,
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { githubExample } from "../../helpers/githubExamples.js";
import { postJson, rawHttp } from "../../helpers/http.js";

const OPEN = "INSECURE_NO_AUTH";
const execFileAsync = promisify(execFile);

/**
 * POSTs a 24 MB body to each path from a separate node process (chunked: as a stream, no
 * Content-Length) and returns each answer, or the connection error fetch threw instead.
 */
async function fetchFromChild(base: string, sends: ReadonlyArray<readonly [string, boolean]>) {
  const script = `
    const big = "x".repeat(24 * 1024 * 1024);
    const out = [];
    for (const [path, chunked] of ${JSON.stringify(sends)}) {
      const body = chunked
        ? new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(big)); c.close(); } })
        : big;
      try {
        const res = await fetch(${JSON.stringify(base)} + path, { method: "POST", body, duplex: "half" });
        out.push({ status: res.status, body: await res.json() });
      } catch (err) {
        out.push({ error: String(err.cause?.code ?? err.message) });
      }
    }
    console.log(JSON.stringify(out));
  `;
  const { stdout } = await execFileAsync(process.execPath, ["--input-type=module", "-e", script]);
  return JSON.parse(stdout) as unknown[];
}

describe("rate limit (spec 8: per route, fixed window, fake clock)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      config: webhookConfig({ a: { secret: "s" }, b: { secret: OPEN } }, { rate_limit: 3 }),
    });
  });
  afterAll(() => gw.stop());

  const signedPost = (route: string, body: string, secret = "s") =>
    postJson(gw.url(`/webhooks/${route}`), body, {
      "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
    });
  const verifications = () =>
    gw.logs().filter((line) => line.msg.startsWith("[webhook] a: rejected (401)")).length;

  it("the 4th request in a minute is 429 Rate limit exceeded, counted per route, before the signature check", async () => {
    for (let i = 0; i < 3; i++) expect((await postJson(gw.url("/webhooks/a"), {})).status).toBe(401);
    const limited = await signedPost("a", '{"n":1}');
    expect(limited).toMatchObject({ status: 429, body: { error: "Rate limit exceeded" } });
    expect(limited.headers.get("retry-after")).toBe("60");
    expect(await postJson(gw.url("/webhooks/b"), {})).toMatchObject({ status: 202 });
  });

  it("once the quota is spent, a badly signed request is 429 without any signature check", async () => {
    const checked = verifications();
    expect((await signedPost("a", "{}", "wrong")).status).toBe(429);
    expect((await postJson(gw.url("/webhooks/a"), {})).status).toBe(429);
    expect(verifications()).toBe(checked);
  });

  it("the next window starts fresh; duplicates count", async () => {
    gw.clock.advance(60_000);
    const body = '{"n":2}';
    const headers = (id: string) => ({
      "x-hub-signature-256": `sha256=${createHmac("sha256", "s").update(body).digest("hex")}`,
      "x-github-delivery": id,
    });
    expect((await postJson(gw.url("/webhooks/a"), body, headers("dup"))).status).toBe(202);
    expect(await postJson(gw.url("/webhooks/a"), body, headers("dup"))).toMatchObject({
      status: 200,
      body: { status: "duplicate" },
    });
    expect((await postJson(gw.url("/webhooks/a"), {})).status).toBe(401);
    expect((await signedPost("a", "{}")).status).toBe(429);
  });
});

describe("rate limit across a config reload (SIGHUP)", () => {
  it("a reload keeps each route's window and count; a new rate_limit applies to the window in progress", async () => {
    const gw = await startTestGateway({ config: webhookConfig({ b: { secret: OPEN } }, { rate_limit: 2 }) });
    try {
      const post = async () => (await postJson(gw.url("/webhooks/b"), {})).status;
      expect([await post(), await post(), await post()]).toEqual([202, 202, 429]);
      gw.home.write("config.yaml", stringify(webhookConfig({ b: { secret: OPEN } }, { rate_limit: 3 })));
      gw.gateway.reload();
      expect([await post(), await post()]).toEqual([202, 429]);
      // Reloads that change nothing (or anything else) hand out no fresh budget either.
      gw.gateway.reload();
      gw.gateway.reload();
      expect(await post()).toBe(429);
      gw.clock.advance(60_000);
      expect([await post(), await post(), await post(), await post()]).toEqual([202, 202, 202, 429]);
    } finally {
      await gw.stop();
    }
  });
});

/**
 * Sends each path a 24 MB body with a Content-Length and `Connection: close` (as Python's urllib and Ruby's
 * Net::HTTP send every request) from a separate node process, over a plain socket, and returns each answer's
 * status line and body, with the error the socket raised while the body was being written, if any.
 */
async function closingSenderFromChild(port: number, paths: readonly string[]) {
  const script = `
    import { connect } from "node:net";
    const big = Buffer.alloc(24 * 1024 * 1024, 0x78);
    const out = [];
    for (const path of ${JSON.stringify(paths)}) {
      out.push(await new Promise((resolve) => {
        const socket = connect(${port}, "127.0.0.1");
        let received = "";
        let error = null;
        socket.on("data", (data) => { received += data.toString("latin1"); });
        socket.on("error", (err) => { error = err.code ?? err.message; });
        socket.on("close", () => {
          const [head = "", body = ""] = received.split("\\r\\n\\r\\n");
          resolve({ status: head.split("\\r\\n")[0], body, error });
        });
        socket.on("connect", () => {
          socket.write("POST " + path + " HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: " + big.length +
            "\\r\\nConnection: close\\r\\n\\r\\n");
          socket.write(big);
        });
      }));
    }
    console.log(JSON.stringify(out));
  `;
  const { stdout } = await execFileAsync(process.execPath, ["--input-type=module", "-e", script]);
  return JSON.parse(stdout) as unknown[];
}

describe.each(HTTP_SERVERS)("body size (spec 4.2 step 2, %s server)", (http) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig({ r: { secret: OPEN } }, { max_body_bytes: 100 }),
    });
  });
  afterAll(() => gw.stop());

  it("a Content-Length over max_body_bytes is 413 before any body byte is sent", async () => {
    const answer = await rawHttp(gw.gateway.port, [
      "POST /webhooks/r HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n",
    ]);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toEqual({ error: "Payload too large" });
  });

  it("a body of exactly max_body_bytes is read", async () => {
    const body = JSON.stringify({ pad: "x".repeat(100 - 10) });
    expect(body.length).toBe(100);
    expect((await postJson(gw.url("/webhooks/r"), body)).status).toBe(202);
  });

  it("a chunked body of exactly max_body_bytes is read however it is split; one byte more is 413", async () => {
    const chunk = (text: string) => `${text.length.toString(16)}\r\n${text}\r\n`;
    const head = "POST /webhooks/r HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    // Three chunks, the last of one byte, then the terminating chunk: the size is the sum of the chunks.
    const split = (body: string) => [
      head,
      chunk(body.slice(0, 37)),
      chunk(body.slice(37, -1)),
      chunk(body.slice(-1)),
      "0\r\n\r\n",
    ];
    const exactly = JSON.stringify({ pad: "x".repeat(100 - 10) });
    expect(exactly.length).toBe(100);
    expect((await rawHttp(gw.gateway.port, split(exactly))).status).toBe(202);
    const over = `${exactly.slice(0, -1)} }`;
    expect(over.length).toBe(101);
    const answer = await rawHttp(gw.gateway.port, split(over));
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toEqual({ error: "Payload too large" });
  });

  it("a chunked body (no Content-Length) is cut off with 413 once it passes the limit", async () => {
    const chunk = (text: string) => `${text.length.toString(16)}\r\n${text}\r\n`;
    const head =
      "POST /webhooks/r HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n";
    const answer = await rawHttp(gw.gateway.port, [
      head,
      chunk(`{"a":"${"y".repeat(60)}`),
      chunk(`${"z".repeat(60)}"}`),
      "0\r\n\r\n",
    ]);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toEqual({ error: "Payload too large" });
  });

  it("a chunked body past the limit is answered 413 while the sender is still sending it", async () => {
    const head = "POST /webhooks/r HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    const text = `{"a":"${"y".repeat(150)}"}`;
    // No terminating chunk: the body never ends, the answer must not wait for its end.
    const answer = await rawHttp(gw.gateway.port, [head, `${text.length.toString(16)}\r\n${text}\r\n`]);
    expect(answer.status).toBe(413);
    expect(answer.head.toLowerCase()).toContain("connection: close");
    expect(JSON.parse(answer.body)).toEqual({ error: "Payload too large" });
  });

  it("a chunked body that never ends has its connection closed (after its 413), not read forever", async () => {
    const socket = connect(gw.gateway.port, "127.0.0.1");
    let received = "";
    let sent = 0;
    socket.on("data", (data) => {
      received += data.toString("latin1");
    });
    socket.on("error", () => {});
    const chunk = Buffer.from(`10000\r\n${"y".repeat(0x10000)}\r\n`);
    const pump = () => {
      while (!socket.destroyed && socket.write(chunk)) sent += 0x10000;
    };
    socket.on("drain", pump);
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
    socket.on("connect", () => {
      socket.write("POST /webhooks/r HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
      pump();
    });
    // The sender never stops: only svc closing the connection ends the wait (a gateway that read
    // forever would hang the test until its timeout), and it did so long before 512 MiB had gone.
    await closed;
    expect(sent).toBeLessThan(512 * 1024 * 1024);
    // The cut of a body still being sent resets the connection, which may discard the answer before
    // the sender reads it; when it got through, it is the 413.
    if (received !== "") expect(received).toMatch(/^HTTP\/1\.1 413 [\s\S]*\{"error":"Payload too large"\}/);
  });

  it("a sender that writes its whole oversized body (fetch, 24 MB) reads the 413, not a reset", async () => {
    // Closing with unread body bytes resets the connection: fetch then fails with EPIPE/ECONNRESET
    // instead of returning the answer the server already wrote. The sender is its own process, as a
    // real one is (in this process the server's close and the client's writes interleave differently).
    const answers = await fetchFromChild(gw.base, [
      ["/webhooks/r", false],
      ["/webhooks/r", true],
      ["/webhooks/missing", false],
      ["/webhooks/r", false],
      ["/webhooks/r", true],
      ["/webhooks/missing", false],
    ]);
    const tooLarge = { status: 413, body: { error: "Payload too large" } };
    const unknown = { status: 404, body: { error: "Unknown route" } };
    expect(answers).toEqual([tooLarge, tooLarge, unknown, tooLarge, tooLarge, unknown]);
    expect((await postJson(gw.url("/webhooks/r"), {})).status).toBe(202);
    // 144 MB through loopback from another process: beyond the default 30 s on a loaded 2-core machine.
  }, 120_000);

  it("a sender that says Connection: close and writes its whole oversized body reads the 413, not a reset", async () => {
    // uWS closes after any answer to such a request: written while the declared body was still coming,
    // the 413 was followed by a reset, and the sender's write failed with EPIPE/ECONNRESET.
    const answers = await closingSenderFromChild(gw.gateway.port, [
      "/webhooks/r",
      "/webhooks/missing",
      "/webhooks/r",
    ]);
    const tooLarge = {
      status: "HTTP/1.1 413 Payload Too Large",
      body: '{"error":"Payload too large"}',
      error: null,
    };
    const unknown = { status: "HTTP/1.1 404 Not Found", body: '{"error":"Unknown route"}', error: null };
    expect(answers).toEqual([tooLarge, unknown, tooLarge]);
    expect((await postJson(gw.url("/webhooks/r"), {})).status).toBe(202);
    // 72 MB through loopback from another process, on a loaded 2-core machine.
  }, 120_000);

  it("a small chunked body is accepted", async () => {
    const body = '{"small":true}';
    const head = "POST /webhooks/r HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    const answer = await rawHttp(gw.gateway.port, [
      head,
      `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    ]);
    expect(answer.status).toBe(202);
  });
});

describe("idempotency (spec 6)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      files: { "agent/recorder.sh": RECORDER_AGENT },
      config: webhookConfig(
        { r: { secret: OPEN, filters: [{ field: "go", equals: true }] }, other: { secret: OPEN } },
        { rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
  });
  afterAll(() => gw.stop());
  const runs = () => gw.logs().filter((l) => l.msg.startsWith("[webhook] r reply:"));

  it.each([
    ["X-Forge-Delivery"],
    ["X-GitHub-Delivery"],
    ["vendor-id"],
    ["svix-id"],
    ["webhook-id"],
    ["X-Request-ID"],
  ])("a repeated %s is 200 {status: duplicate} with no second run", async (header) => {
    const id = `${header}-1`;
    expect(await postJson(gw.url("/webhooks/r"), { go: true }, { [header]: id })).toMatchObject({
      status: 202,
      body: { delivery_id: id },
    });
    expect(await postJson(gw.url("/webhooks/r"), { go: true }, { [header]: id })).toEqual(
      expect.objectContaining({ status: 200, body: { status: "duplicate" } }),
    );
    await waitForRun(gw, id);
    // The duplicate was answered before the first run finished, so no second run can follow this one.
    await vi.waitFor(() => expect(runs().filter((l) => l.delivery_id === id).length).toBeGreaterThan(0), {
      timeout: 10_000,
    });
    expect(runs().filter((l) => l.delivery_id === id)).toHaveLength(1);
  });

  it("with several present, the delivery id is the first of X-Forge-Delivery, vendor-id, webhook-id, X-Request-ID", async () => {
    const all: Record<string, string> = {
      "X-Forge-Delivery": "order-forge",
      "vendor-id": "order-vendor",
      "webhook-id": "order-webhook",
      "X-Request-ID": "order-request",
    };
    for (const [header, id] of Object.entries(all)) {
      expect(await postJson(gw.url("/webhooks/other"), {}, all), header).toMatchObject({
        status: 202,
        body: { delivery_id: id },
      });
      delete all[header];
    }
  });

  it("without a delivery id every request gets a fresh random id (never deduplicated)", async () => {
    const a = await postJson(gw.url("/webhooks/r"), { go: true });
    const b = await postJson(gw.url("/webhooks/r"), { go: true });
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(a.body.delivery_id).not.toBe(b.body.delivery_id);
  });

  it("ids are remembered per route", async () => {
    expect((await postJson(gw.url("/webhooks/r"), { go: true }, { "X-Request-ID": "shared" })).status).toBe(
      202,
    );
    expect((await postJson(gw.url("/webhooks/other"), {}, { "X-Request-ID": "shared" })).status).toBe(202);
  });

  it("an event ignored by a filter is not recorded: its retry is processed", async () => {
    expect(
      await postJson(gw.url("/webhooks/r"), { go: false }, { "X-Request-ID": "retry-me" }),
    ).toMatchObject({
      status: 200,
      body: { status: "ignored", reason: "filter" },
    });
    expect(await postJson(gw.url("/webhooks/r"), { go: true }, { "X-Request-ID": "retry-me" })).toMatchObject(
      { status: 202 },
    );
  });

  it("ids expire after 1 hour", async () => {
    expect((await postJson(gw.url("/webhooks/other"), {}, { "X-Request-ID": "hour" })).status).toBe(202);
    gw.clock.advance(59 * 60_000);
    expect((await postJson(gw.url("/webhooks/other"), {}, { "X-Request-ID": "hour" })).status).toBe(200);
    gw.clock.advance(61_000);
    expect((await postJson(gw.url("/webhooks/other"), {}, { "X-Request-ID": "hour" })).status).toBe(202);
  });
});

describe("templates (spec 2.5) with real GitHub payloads", () => {
  let gw: TestGateway;
  const pr = githubExample("pull_request", "opened");
  beforeAll(async () => {
    gw = await startTestGateway({
      files: { "agent/recorder.sh": RECORDER_AGENT },
      config: webhookConfig(
        {
          nested: {
            secret: OPEN,
            prompt: "#{number} {pull_request.title} by {pull_request.user.login} in {repository.full_name}",
          },
          missing: { secret: OPEN, prompt: "{pull_request.nope} and {nothing}" },
          object: { secret: OPEN, prompt: "labels={pull_request.labels} big={big}" },
          raw: { secret: OPEN, prompt: "[{action}] {__raw__}" },
          dump: { secret: OPEN },
          plain: { secret: OPEN, prompt: "{{action}} {% if x %} { action } {action" },
        },
        { rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
  });
  afterAll(() => gw.stop());

  const promptFor = async (route: string, body: Record<string, unknown>) => {
    const res = await postJson(gw.url(`/webhooks/${route}`), body);
    expect(res.status).toBe(202);
    return (await waitForRun(gw, res.body.delivery_id as string)).prompt;
  };

  it("rule 1: {a.b.c} resolves nested values", async () => {
    const p = pr as {
      number: number;
      pull_request: { title: string; user: { login: string } };
      repository: { full_name: string };
    };
    expect(await promptFor("nested", pr)).toBe(
      `#${p.number} ${p.pull_request.title} by ${p.pull_request.user.login} in ${p.repository.full_name}`,
    );
  });

  it("rule 2: a missing key leaves the literal text", async () => {
    expect(await promptFor("missing", pr)).toBe("{pull_request.nope} and {nothing}");
  });

  it("rule 3: a nested dict or list is JSON-serialized and truncated at 2000 characters", async () => {
    const big = { list: Array.from({ length: 500 }, (_, i) => `item-${i}`) };
    const prompt = await promptFor("object", { ...pr, big });
    const labels = JSON.stringify((pr.pull_request as { labels: unknown }).labels);
    expect(prompt.startsWith(`labels=${labels} big=`)).toBe(true);
    expect(prompt.slice(`labels=${labels} big=`.length)).toBe(JSON.stringify(big).slice(0, 2000));
  });

  it("rule 4: {__raw__} is the whole payload as indented JSON truncated at 4000, mixed with other fields", async () => {
    expect(await promptFor("raw", pr)).toBe(`[opened] ${JSON.stringify(pr, null, 2).slice(0, 4000)}`);
  });

  it("rule 5: with no prompt the payload is dumped as indented JSON truncated at 4000", async () => {
    const small = { a: 1, b: [1, 2] };
    expect(await promptFor("dump", small)).toBe(JSON.stringify(small, null, 2));
    expect(await promptFor("dump", pr)).toBe(JSON.stringify(pr, null, 2).slice(0, 4000));
  });

  it("rule 6: only {field} and {nested.field} are substituted; anything else passes through", async () => {
    expect(await promptFor("plain", { action: "opened", x: 1 })).toBe(
      "{{action}} {% if x %} { action } {action",
    );
  });
});

describe("run queue cap (agent runs waiting for a slot)", () => {
  // One slot, held by a run that waits for agent/go to exist; at most two more may wait.
  const BLOCKING_AGENT = `#!/usr/bin/env bash
while [ ! -e "$(dirname "$0")/go" ]; do sleep 0.05; done
printf 'done %s' "$SVC_DELIVERY_ID"
`;
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      runQueueCap: 2,
      files: { "agent/block.sh": BLOCKING_AGENT },
      config: webhookConfig(
        { q: { secret: OPEN, prompt: "n{n}" } },
        {},
        {
          agent: {
            provider: "command",
            command: ["bash", inHome("agent/block.sh")],
            max_concurrent_runs: 1,
          },
        },
      ),
    });
  });
  afterAll(() => gw.stop());

  it("past the cap an agent event is 503 and its id is not remembered, so the sender's retry is accepted later", async () => {
    const send = (id: string) => postJson(gw.url("/webhooks/q"), { n: id }, { "x-request-id": id });
    // r1 takes the only slot at once; then two may wait.
    expect((await send("r1")).status).toBe(202);
    const waiting = [await send("r2"), await send("r3")];
    expect(waiting.map((a) => a.status)).toEqual([202, 202]);
    const full = await send("r4");
    expect(full).toMatchObject({ status: 503, body: { error: "Agent run queue is full, retry later" } });
    expect(full.headers.get("retry-after")).toBe("30");
    gw.home.write("agent/go", "");
    await vi.waitFor(() => expect(gw.logs().filter((l) => l.msg.includes("q reply:")).length).toBe(3), {
      timeout: 10_000,
      interval: 50,
    });
    expect((await send("r4")).status).toBe(202);
  });
});
