import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatCompletionsFetch, messagesApiFetch } from "../../../src/io/modelFetch.js";

/** A loopback server answering every request with `answer`'s status and event stream. */
let server: Server;
let url: string;
let answer = { status: 200, body: "" };

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () =>
      res.writeHead(answer.status, { "content-type": "text/event-stream" }).end(answer.body),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const chunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const STREAM = `${chunk({ content: "Hi" })}${chunk({}, "stop")}data: [DONE]\n\n`;
const post = (body: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

describe("a model's answer streamed to a request that asked for no stream", () => {
  it("Chat Completions: handed on as the assembled JSON answer, passed through the normalize step", async () => {
    answer = { status: 200, body: STREAM };
    const seen: unknown[] = [];
    const fetch = chatCompletionsFetch((json) => {
      seen.push(json);
      return { ...(json as object), normalized: true };
    });
    const response = await fetch(`${url}/chat/completions`, post({ model: "m", messages: [] }));
    expect(response.headers.get("content-type")).toBe("application/json");
    const expected = {
      id: "c",
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: "Hi" }, finish_reason: "stop" }],
    };
    expect(seen).toEqual([expected]);
    expect(await response.json()).toEqual({ ...expected, normalized: true });
  });

  it("Messages API: handed on as the assembled message, normalized with the URL it came from", async () => {
    const event = (type: string, data: Record<string, unknown>) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    answer = {
      status: 200,
      body: [
        event("message_start", { message: { id: "m", type: "message", role: "assistant", content: [] } }),
        event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
        event("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Hi" } }),
        event("content_block_stop", { index: 0 }),
        event("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 1 } }),
        event("message_stop", {}),
      ].join(""),
    };
    const seen: unknown[] = [];
    const fetch = messagesApiFetch((json, from) => {
      seen.push(from);
      return undefined;
    });
    const response = await fetch(`${url}/messages`, post({ model: "m", messages: [] }));
    expect(seen).toEqual([`${url}/messages`]);
    expect(await response.json()).toEqual({
      id: "m",
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: "Hi" }],
      stop_reason: "end_turn",
      usage: { output_tokens: 1 },
    });
  });

  it("a stream that assembles into no answer is handed on as a text saying what was wrong; one cut off marked to be retried (x-should-retry)", async () => {
    answer = { status: 200, body: chunk({ content: "Hi" }) };
    const response = await chatCompletionsFetch(() => undefined)(`${url}/chat/completions`, post({}));
    expect(response.status).toBe(200);
    expect(response.headers.get("x-should-retry")).toBe("true");
    expect(await response.text()).toBe(
      "an event stream (text/event-stream) cut off before its end (no data: [DONE] after 1 event) — the server, or a proxy in front of it, ended the answer early",
    );
    // An event that is not JSON is no cut: every try would get the same.
    answer = { status: 200, body: "data: {not json}\n\ndata: [DONE]\n\n" };
    const garbled = await chatCompletionsFetch(() => undefined)(`${url}/chat/completions`, post({}));
    expect(garbled.headers.get("x-should-retry")).toBeNull();
    expect(await garbled.text()).toMatch(/whose event 1 is not JSON/);
  });

  it("an error event of a kind a later try may not meet is handed on marked to be retried (x-should-retry), others not", async () => {
    const errorEvent = (type: string) =>
      `event: error\ndata: ${JSON.stringify({ type: "error", error: { type, message: type } })}\n\n`;
    const fetch = messagesApiFetch(() => undefined);
    answer = { status: 200, body: errorEvent("overloaded_error") };
    const overloaded = await fetch(`${url}/messages`, post({}));
    expect(overloaded.status).toBe(200);
    expect(overloaded.headers.get("x-should-retry")).toBe("true");
    expect(await overloaded.json()).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "overloaded_error" },
    });
    answer = { status: 200, body: errorEvent("invalid_request_error") };
    const refused = await fetch(`${url}/messages`, post({}));
    expect(refused.headers.get("x-should-retry")).toBeNull();
    answer = { status: 200, body: STREAM };
    expect(
      (await chatCompletionsFetch(() => undefined)(`${url}/chat/completions`, post({}))).headers.get(
        "x-should-retry",
      ),
    ).toBeNull();
  });

  it("a JSON answer labelled text/event-stream is read as the JSON it is, not as a stream with no events", async () => {
    const completion = {
      id: "c",
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: "Hi" }, finish_reason: "stop" }],
    };
    answer = { status: 200, body: ` ${JSON.stringify(completion)}` };
    const response = await chatCompletionsFetch(() => undefined)(`${url}/chat/completions`, post({}));
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual(completion);
  });

  it("a request that asked for a stream, and an error answer, get the stream as it came", async () => {
    answer = { status: 200, body: STREAM };
    const asked = await chatCompletionsFetch(() => undefined)(
      `${url}/chat/completions`,
      post({ stream: true }),
    );
    expect(asked.headers.get("content-type")).toBe("text/event-stream");
    expect(await asked.text()).toBe(STREAM);
    answer = { status: 503, body: STREAM };
    const failed = await chatCompletionsFetch(() => undefined)(`${url}/chat/completions`, post({}));
    expect(failed.status).toBe(503);
    expect(await failed.text()).toBe(STREAM);
  });
});
