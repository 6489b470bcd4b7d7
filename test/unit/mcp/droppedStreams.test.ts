import { describe, expect, it } from "vitest";
import { scrub } from "../../../src/io/credentials.js";
import { answerDroppedStreams, STREAM_DROPPED } from "../../../src/io/mcp/droppedStreams.js";

const call = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "x" } });

async function bodyOf(sse: string, request = call): Promise<string> {
  const fetch = answerDroppedStreams(
    async () => new Response(sse, { status: 200, headers: { "content-type": "text/event-stream" } }),
  );
  return (await fetch("http://127.0.0.1/mcp", { method: "POST", body: request })).text();
}

describe("answerDroppedStreams (Streamable HTTP response streams)", () => {
  it("answers a request whose stream ended without its answer with a marked JSON-RPC error", async () => {
    const text = await bodyOf(
      'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n',
    );
    const data = text.split("\n").filter((l) => l.startsWith("data: "));
    expect(JSON.parse(data[1]?.slice(6) ?? "")).toMatchObject({
      id: 7,
      error: { code: -32000, data: STREAM_DROPPED },
    });
  });

  it("passes the stream through untouched when the answer came, when it can be resumed, or for notifications", async () => {
    const answered = 'data: {"jsonrpc":"2.0","id":7,"result":{}}\r\n\r\n';
    expect(await bodyOf(answered)).toBe(answered);
    const resumable = "id: ev-1\ndata: \n\n";
    expect(await bodyOf(resumable)).toBe(resumable);
    const notification = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
    expect(await bodyOf("", notification)).toBe("");
  });
});

describe("answerDroppedStreams: an answer the server wrote as no JSON", () => {
  it("is answered as not valid JSON, not as a lost stream (no outcome_uncertain, no replay), with an event id too", async () => {
    for (const prefix of ["", "id: ev-9\n"]) {
      const text = await bodyOf(`${prefix}data: {"jsonrpc":"2.0","id":7,"result":\n\n`);
      const data = text.split("\n").filter((l) => l.startsWith("data: {") && l.includes('"error"'));
      const answer = JSON.parse(data[0]?.slice(6) ?? "") as {
        id: number;
        error: { message: string; data?: unknown };
      };
      expect(answer.id).toBe(7);
      expect(answer.error.message).toMatch(/^the server's answer is not valid JSON \(/);
      expect(answer.error.data).toBeUndefined();
    }
  });
});

describe("answerDroppedStreams: an event's CRLF split between two chunks", () => {
  it("passes the event on whole, its LF included: the stream is not closed on the CR", async () => {
    const first = 'data: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}\r\n\r';
    const fetch = answerDroppedStreams(async () => {
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode(first));
          await new Promise((resolve) => setImmediate(resolve));
          controller.enqueue(new TextEncoder().encode("\n"));
          controller.close();
        },
      });
      return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
    });
    const res = await fetch("http://127.0.0.1/mcp", { method: "POST", body: call });
    expect(await res.text()).toBe(`${first}\n`);
  });
});

describe("answerDroppedStreams: an answer in the stream that is not valid JSON-RPC", () => {
  it("is followed at the stream's end by an error answer saying why (the SDK skips it, and the call waited out its timeout)", async () => {
    const unreadable = 'event: message\ndata: {"jsonrpc":"2.0","id":7,"error":{"code":-32000}}\n\n';
    const text = await bodyOf(unreadable);
    expect(text.startsWith(unreadable)).toBe(true);
    const data = text.split("\n").filter((l) => l.startsWith("data: "));
    expect(data.map((line) => JSON.parse(line.slice(6)))).toEqual([
      { jsonrpc: "2.0", id: 7, error: { code: -32000 } },
      {
        jsonrpc: "2.0",
        id: 7,
        error: {
          code: -32000,
          message: 'the server answered with an error without a message: {"code":-32000}',
        },
      },
    ]);
    // A stream with event ids gets it too (the answer came; there is nothing to resume), a valid answer nothing.
    expect(await bodyOf(`id: ev-1\n${unreadable}`)).toContain("without a message");
  });
});

describe("answerDroppedStreams: such an answer quoting a credential where the quote is cut (300 characters)", () => {
  it("has it redacted before the cut: the error answer shows none of it", async () => {
    // Holding a delimiter; from the quote's character 290, so the cut falls after its colon.
    const secret = "pw12345678:SECRETtail99";
    const result = (key: string) => `${"ab ".repeat(95)}key ${key} and more`;
    const fetch = answerDroppedStreams(
      async () =>
        new Response(
          `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: 7, result: result(secret) })}\n\n`,
          { status: 200, headers: { "content-type": "text/event-stream" } },
        ),
      (text) => scrub(text, [secret]),
    );
    const text = await (await fetch("http://127.0.0.1/mcp", { method: "POST", body: call })).text();
    const answers = text
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as { error?: { message: string } });
    expect(answers[1]?.error?.message).toBe(
      `the server's answer has a result that is not a JSON object: ${JSON.stringify(result("[redacted]")).slice(0, 300)}…`,
    );
  });
});

describe("answerDroppedStreams: an event holding a JSON-RPC batch", () => {
  it("is passed on as one event per message (the SDK reads one per event and skipped the batch), the events around it as they came", async () => {
    const progress = {
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: 7, progress: 1 },
    };
    const answer = { jsonrpc: "2.0", id: 7, result: { content: [] } };
    const before = ": keepalive\r\n\r\n";
    const text = await bodyOf(
      `${before}event: message\nid: ev-9\ndata: ${JSON.stringify([progress, answer])}\n\n`,
    );
    expect(text).toBe(
      `${before}event: message\ndata: ${JSON.stringify(progress)}\n\nevent: message\nid: ev-9\ndata: ${JSON.stringify(answer)}\n\n`,
    );
  });

  it("answered its request: nothing is added at the stream's end; split in the middle of a chunk too", async () => {
    const answer = { jsonrpc: "2.0", id: 7, result: {} };
    const sse = `data: ${JSON.stringify([answer])}\n\n`;
    const fetch = answerDroppedStreams(async () => {
      const bytes = new TextEncoder().encode(sse);
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.slice(0, 10));
          controller.enqueue(bytes.slice(10));
          controller.close();
        },
      });
      return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
    });
    const text = await (await fetch("http://127.0.0.1/mcp", { method: "POST", body: call })).text();
    expect(text).toBe(`event: message\ndata: ${JSON.stringify(answer)}\n\n`);
  });
});

describe("answerDroppedStreams: an event that comes in many chunks", () => {
  it("is passed on whole once complete: chunks that complete no event do not stall the stream", async () => {
    const answer = { jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "y".repeat(5000) }] } };
    const sse = `event: message\r\ndata: ${JSON.stringify(answer)}\r\n\r\n`;
    const bytes = new TextEncoder().encode(sse);
    const fetch = answerDroppedStreams(async () => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          // 100-byte pieces, as a large answer comes off a socket: most complete no line.
          for (let at = 0; at < bytes.length; at += 100) controller.enqueue(bytes.slice(at, at + 100));
          controller.close();
        },
      });
      return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
    });
    const text = await (await fetch("http://127.0.0.1/mcp", { method: "POST", body: call })).text();
    // As it came, and nothing added: the answer was seen.
    expect(text).toBe(sse);
  }, 10_000);
});

describe("answerDroppedStreams: the standalone GET stream (the server's own requests and notifications)", () => {
  it("is split where an event holds a batch, the event id on its last message, all else as it came, nothing added", async () => {
    const changed = { jsonrpc: "2.0", method: "notifications/tools/list_changed" };
    const ping = { jsonrpc: "2.0", id: "server-ping-41", method: "ping" };
    const single = `id: ev-get-1\r\nevent: message\r\ndata: ${JSON.stringify(ping)}\r\n\r\n`;
    const fetch = answerDroppedStreams(
      async () =>
        new Response(`${single}id: ev-get-2\ndata: ${JSON.stringify([changed, ping])}\n\n: open\n`, {
          status: 200,
          headers: { "content-type": "text/event-stream" },
        }),
    );
    const text = await (await fetch("http://127.0.0.1/mcp", { method: "GET" })).text();
    expect(text).toBe(
      `${single}event: message\ndata: ${JSON.stringify(changed)}\n\nevent: message\nid: ev-get-2\ndata: ${JSON.stringify(ping)}\n\n: open\n`,
    );
  });
});
