import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type RequestRecord, readHistory } from "../../../src/io/stores/deliveryHistory.js";
import { HTTP_SERVERS, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson, rawHttp, rawUntilClose } from "../../helpers/http.js";

/**
 * docs/webhook.md: every answer is JSON. node:http answers some requests from its parser before svc
 * sees them (a plain 400, 408, 417 or 431, or nothing at all); the `node` server answers them in JSON.
 */

const OPEN = "INSECURE_NO_AUTH";
const statusOf = (received: string) => Number(received.split(" ")[1]);
/** The first answer in what the server wrote: status, headers and JSON body. */
function firstAnswer(received: string): { status: number; head: string; body: unknown } {
  const split = received.indexOf("\r\n\r\n");
  const head = received.slice(0, split);
  const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? -1);
  expect(length, received).toBeGreaterThanOrEqual(0);
  return {
    status: statusOf(received),
    head,
    body: JSON.parse(received.slice(split + 4, split + 4 + length)),
  };
}
/** Every answer in what the server wrote, in order. */
function allAnswers(received: string): Array<{ status: number; head: string; body: unknown }> {
  const answers = [];
  let rest = received;
  while (rest.length > 0) {
    const answer = firstAnswer(rest);
    answers.push(answer);
    const length = Number(/content-length:\s*(\d+)/i.exec(answer.head)?.[1]);
    rest = rest.slice(answer.head.length + 4 + length);
  }
  return answers;
}
const post = (id: string, lines: string, body: string) =>
  `POST /webhooks/open HTTP/1.1\r\nHost: x\r\nX-Request-ID: ${id}\r\n${lines}\r\n${body}`;

describe("parser refusals on the node server", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      http: "node",
      config: webhookConfig({ open: { secret: OPEN } }, { rate_limit: 1000 }),
    });
  });
  afterAll(() => gw.stop());

  const refused = async (id: string, bytes: string, status: number, error: string | RegExp) => {
    const answer = await rawUntilClose(gw.gateway.port, bytes);
    expect(answer.closed, id).toBe(true);
    const first = firstAnswer(answer.received);
    expect(first.status, id).toBe(status);
    expect(first.head, id).toMatch(/\r\nContent-Type: application\/json(\r\n|$)/i);
    expect(first.head, id).toMatch(/\r\nConnection: close(\r\n|$)/i);
    // As every other answer of both servers: RFC 9110 §6.6.1 asks a Date of each 4xx.
    expect(first.head, id).toMatch(/\r\nDate: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT(\r\n|$)/);
    expect(first.body, id).toEqual({ error: expect.stringMatching(error) });
    // Never processed: the same delivery id sent properly is accepted, not a duplicate.
    expect(await postJson(gw.url("/webhooks/open"), {}, { "X-Request-ID": id }), id).toMatchObject({
      status: 202,
      body: { status: "accepted" },
    });
  };

  it("a malformed head (lowercase method, Content-Length: abc, a control byte in a value) is a JSON 400", async () => {
    await refused(
      "lower",
      "post /webhooks/open HTTP/1.1\r\nHost: x\r\nX-Request-ID: lower\r\n\r\n",
      400,
      /^Bad request/,
    );
    await refused("cl-abc", post("cl-abc", "Content-Length: abc\r\n", "{}"), 400, /^Bad request/);
    await refused("ctl", post("ctl", "X-Team: a\x01b\r\nContent-Length: 2\r\n", "{}"), 400, /^Bad request/);
  });

  it("two Content-Length headers are the JSON 400 both servers give", async () => {
    await refused(
      "two-cl",
      post("two-cl", "Content-Length: 2\r\nContent-Length: 7\r\n", '{}{"a":1}'),
      400,
      /^Bad request: more than one Content-Length$/,
    );
  });

  it("a refused head with a long run of spaces inside a header value is answered at once", async () => {
    // Its lines were read with a pattern that backtracked over such a run: 60 000 spaces held the event
    // loop ~10 s per request, for anyone who can connect (these refusals come before any route or quota).
    await refused(
      "long-pad",
      post("long-pad", `Content-Length: 2\r\nContent-Length: 7\r\nX-Pad: a${" ".repeat(60_000)}b\r\n`, "{}"),
      400,
      /^Bad request: more than one Content-Length$/,
    );
  });

  it("Content-Length with Transfer-Encoding, in either order, is a JSON 400 naming both", async () => {
    const both = /^Bad request: both Content-Length and Transfer-Encoding$/;
    const body = "2\r\n{}\r\n0\r\n\r\n";
    await refused(
      "cl-te",
      post("cl-te", "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n", body),
      400,
      both,
    );
    await refused(
      "te-cl",
      post("te-cl", "Transfer-Encoding: chunked\r\nContent-Length: 2\r\n", body),
      400,
      both,
    );
  });

  it("a HEAD request the parser refuses gets the status and headers, and no body (RFC 9110 §9.3.2)", async () => {
    const head = (lines: string) => `HEAD /webhooks/open HTTP/1.1\r\nHost: x\r\n${lines}\r\n`;
    for (const [lines, status] of [
      ["Content-Length: 1\r\nContent-Length: 2\r\n", 400],
      ["Content-Length: 2\r\nTransfer-Encoding: chunked\r\n", 400],
      ["Transfer-Encoding: chunked\r\nContent-Length: 2\r\n", 400],
    ] as const) {
      const answer = await rawUntilClose(gw.gateway.port, head(lines));
      expect(answer.closed, lines.slice(0, 40)).toBe(true);
      expect(statusOf(answer.received), lines.slice(0, 40)).toBe(status);
      // The length its GET would have, as any HEAD answer: and nothing after the head.
      expect(answer.received, lines.slice(0, 40)).toMatch(/\r\nContent-Length: [1-9]\d*\r\n/i);
      expect(answer.received.endsWith("\r\n\r\n"), answer.received).toBe(true);
    }
  });

  it("broken chunk framing in the body is a JSON 400", async () => {
    await refused(
      "chunk-xx",
      post("chunk-xx", "Transfer-Encoding: chunked\r\n", "2\r\n{}XX0\r\n\r\n"),
      400,
      /^Bad request/,
    );
  });

  it("an HTTP/1.1 request without Host is a JSON 400 naming the header (node's own answer is a bare 400)", async () => {
    const noHost = (id: string, lines: string) =>
      `POST /webhooks/open HTTP/1.1\r\nX-Request-ID: ${id}\r\n${lines}Content-Length: 2\r\n\r\n{}`;
    const needsHost = /^Bad request: an HTTP\/1\.1 request needs a Host header$/;
    await refused("no-host", noHost("no-host", ""), 400, needsHost);
    await refused("no-host-expect", noHost("no-host-expect", "Expect: foo\r\n"), 400, needsHost);
  });

  it("headers past the limit are a JSON 431", async () => {
    await refused(
      "big-head",
      post("big-head", `X-Pad: ${"a".repeat(140 * 1024)}\r\nContent-Length: 2\r\n`, "{}"),
      431,
      /^Request header fields too large$/,
    );
  });

  it("more than 2000 header lines are a JSON 431, never processed with the lines past 2000 left out; 2000 are read", async () => {
    const pad = (count: number) => Array.from({ length: count }, (_, i) => `X-Pad-${i}: v\r\n`).join("");
    // The request's own lines (Host, X-Request-ID, Content-Length) make 3 of them; the event comes last.
    await refused(
      "many-lines",
      post("many-lines", `${pad(1998)}Content-Length: 2\r\nX-Forge-Event: push\r\n`, "{}"),
      431,
      /^Request header fields too large$/,
    );
    const read = await rawHttp(gw.gateway.port, [
      post("2000-lines", `${pad(1996)}Content-Length: 2\r\nX-Forge-Event: push\r\n`, "{}"),
    ]);
    expect(read.status).toBe(202);
    expect(JSON.parse(read.body)).toMatchObject({ status: "accepted", event: "push" });
  });

  it("an expectation other than 100-continue is a JSON 417", async () => {
    await refused(
      "expect-foo",
      post("expect-foo", "Expect: foo\r\nContent-Length: 2\r\n", "{}"),
      417,
      /^Expectation failed/,
    );
  });

  it("junk after a complete request: the request's own answer is written first, then a JSON 400 for the junk", async () => {
    // A Content-Length shorter than the body sent: the bytes after it are a request of their own.
    for (const [id, body, first] of [
      ["junk-after", "{}xyz\r\n\r\n", { status: 202, body: { status: "accepted" } }],
      ["junk-short", '{"a":1}\r\n\r\n', { status: 400, body: { error: "Invalid JSON body" } }],
    ] as const) {
      const answer = await rawUntilClose(gw.gateway.port, post(id, "Content-Length: 2\r\n", body));
      expect(answer.closed, id).toBe(true);
      const answers = allAnswers(answer.received);
      expect(answers, id).toMatchObject([first, { status: 400, body: { error: "Bad request" } }]);
      expect(answers[0]?.head, id).not.toMatch(/\r\nConnection:/i);
      expect(answers[1]?.head, id).toMatch(/\r\nConnection: close(\r\n|$)/i);
    }
  });

  it("nothing is written after an answer that closes the connection", async () => {
    for (const [id, bytes] of [
      ["asked-close", "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nxx\r\n\r\n"],
      ["unknown-route", "POST /webhooks/nope HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}xx\r\n\r\n"],
    ] as const) {
      const answer = await rawUntilClose(gw.gateway.port, bytes);
      expect(answer.closed, id).toBe(true);
      const answers = allAnswers(answer.received);
      expect(answers, id).toHaveLength(1);
      expect(answers[0]?.head, id).toMatch(/\r\nConnection: close(\r\n|$)/i);
    }
  });
});

describe.each(HTTP_SERVERS)("Expect on the %s server", (http) => {
  it("Expect: 100-continue still gets its 100 and then the answer", async () => {
    const gw = await startTestGateway({ http, config: webhookConfig({ open: { secret: OPEN } }) });
    try {
      const answer = await rawUntilClose(
        gw.gateway.port,
        post("continue", "Expect: 100-continue\r\nConnection: close\r\nContent-Length: 2\r\n", "{}"),
      );
      expect(answer.received).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 202 /);
    } finally {
      await gw.stop();
    }
  });

  it("a request with no body to hold back (GET /health, a POST with Content-Length: 0) keeps its connection after the answer", async () => {
    const gw = await startTestGateway({ http, config: webhookConfig({ open: { secret: OPEN } }) });
    try {
      const answer = await rawUntilClose(
        gw.gateway.port,
        "GET /health HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n" +
          "POST /health HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n" +
          "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      );
      const statuses = [...answer.received.matchAll(/HTTP\/1\.1 (\d+) /g)].map((m) => Number(m[1]));
      expect(statuses.filter((status) => status !== 100)).toEqual([200, 405, 200]);
      expect(answer.received.match(/Connection: close/g)).toHaveLength(1);
    } finally {
      await gw.stop();
    }
  });
});

describe("parser refusals on the node server are counted and logged", () => {
  it("in the access log and the request metrics, as other answers are", async () => {
    const gw = await startTestGateway({
      http: "node",
      config: webhookConfig({ open: { secret: OPEN } }, { access_log: true }),
    });
    try {
      // The head unreadable; a body whose chunk framing breaks; an expectation node cannot meet.
      await rawUntilClose(gw.gateway.port, "post /webhooks/open HTTP/1.1\r\nHost: x\r\n\r\n");
      await rawUntilClose(
        gw.gateway.port,
        post("chunk-xx", "Transfer-Encoding: chunked\r\n", "2\r\n{}XX0\r\n\r\n"),
      );
      await rawUntilClose(gw.gateway.port, post("expect-foo", "Expect: foo\r\nContent-Length: 2\r\n", "{}"));
      await rawUntilClose(
        gw.gateway.port,
        "POST /webhooks/open HTTP/1.1\r\nX-Request-ID: no-host\r\nContent-Length: 2\r\n\r\n{}",
      );
      const lines = gw
        .logs()
        .filter((l) => l.msg.startsWith("[access]"))
        .map((l) => l.msg.replace(/ \d+ms$/, " <ms>"));
      expect(lines).toEqual([
        "[access] - - 400 - <ms>",
        "[access] POST open 400 chunk-xx <ms>",
        "[access] POST open 417 expect-foo <ms>",
        "[access] POST open 400 no-host <ms>",
      ]);
      const metrics = await (await fetch(gw.url("/metrics"))).text();
      expect(metrics).toMatch(/^svc_webhook_requests_total\{route="\(unknown\)",status="400"\} 1$/m);
      expect(metrics).toMatch(/^svc_webhook_requests_total\{route="open",status="400"\} 2$/m);
      expect(metrics).toMatch(/^svc_webhook_requests_total\{route="open",status="417"\} 1$/m);
    } finally {
      await gw.stop();
    }
  });

  it("a body refused after its head was handed over is timed from that head (the gateway's clock), not as 0", async () => {
    const gw = await startTestGateway({
      http: "node",
      config: webhookConfig({ open: { secret: OPEN } }, { access_log: true }),
    });
    try {
      const socket = connect(gw.gateway.port, "127.0.0.1");
      let received = "";
      socket.on("data", (d) => (received += d));
      const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
      socket.on("error", () => {});
      await new Promise((resolve) =>
        socket.write(post("late-chunk", "Transfer-Encoding: chunked\r\n", "2\r\n{}"), resolve),
      );
      // An answer on another connection after those bytes were sent: the gateway has read the head and
      // handed it over (its request waits for the rest of the body). Then 4.5 s pass on its clock.
      expect((await fetch(gw.url("/health"))).status).toBe(200);
      gw.clock.advance(4500);
      socket.write("XX0\r\n\r\n");
      await closed;
      expect(statusOf(received)).toBe(400);
      await vi.waitFor(
        () => expect(gw.logs().map((l) => l.msg)).toContain("[access] POST open 400 late-chunk 4500ms"),
        { timeout: 10_000 },
      );
      const metrics = await (await fetch(gw.url("/metrics"))).text();
      expect(metrics).toMatch(/^svc_webhook_request_seconds_total 4\.5\d*$/m);
    } finally {
      await gw.stop();
    }
  });
});

describe.each(HTTP_SERVERS)("a framing refusal both servers give, on the %s server", (http) => {
  it("is counted, logged and kept in the delivery history under the route its request line names, as any answer", async () => {
    const gw = await startTestGateway({
      http,
      config: webhookConfig({ open: { secret: OPEN } }, { access_log: true }),
    });
    try {
      const answer = await rawUntilClose(
        gw.gateway.port,
        post("dup-cl", "Content-Length: 2\r\nContent-Length: 3\r\n", "{}"),
      );
      expect(statusOf(answer.received)).toBe(400);
      await vi.waitFor(
        () =>
          expect(
            gw
              .logs()
              .filter((l) => l.msg.startsWith("[access]"))
              .map((l) => l.msg.replace(/ \d+ms$/, " <ms>")),
          ).toEqual(["[access] POST open 400 dup-cl <ms>"]),
        { timeout: 10_000 },
      );
      const metrics = await (await fetch(gw.url("/metrics"))).text();
      expect(metrics).toMatch(/^svc_webhook_requests_total\{route="open",status="400"\} 1$/m);
      expect(metrics).not.toMatch(/^svc_webhook_requests_total\{route="\(unknown\)",status="400"\} 1$/m);
      await vi.waitFor(
        () =>
          expect(
            readHistory(join(gw.home.dir, "deliveries")).filter(
              (r): r is RequestRecord => r.kind === "request" && r.id === "dup-cl",
            ),
          ).toMatchObject([{ route: "open", status: 400 }]),
        { timeout: 10_000 },
      );
    } finally {
      await gw.stop();
    }
  });
});
