import { describe, expect, it } from "vitest";
import { AnswerTooLargeError, boundedAnswers } from "../../../src/io/mcp/answerSizeLimit.js";

/** A fetch answering `chunks` as the body, with the content type given. */
function answering(type: string, chunks: readonly string[]) {
  return async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
          controller.close();
        },
      }),
      { headers: { "content-type": type } },
    );
}

const read = async (type: string, chunks: readonly string[], limit: number) =>
  (await boundedAnswers(answering(type, chunks), limit)("http://x/mcp")).text();

describe("boundedAnswers: svc's limit for one message of a url server", () => {
  it("bounds a JSON body as a whole", async () => {
    await expect(read("application/json", ['{"a":', '"0123"}'], 12)).resolves.toBe('{"a":"0123"}');
    await expect(read("application/json", ['{"a":', '"01234"}'], 12)).rejects.toThrow(AnswerTooLargeError);
  });

  it("bounds each event of an SSE stream, not the stream: a stream open for hours carries many", async () => {
    const event = "data: 0123456789\n\n";
    const many = Array.from({ length: 100 }, () => event);
    await expect(read("text/event-stream", many, 20)).resolves.toBe(many.join(""));
    await expect(read("text/event-stream", ["data: 0123456789", "0123456789\n\n"], 20)).rejects.toThrow(
      AnswerTooLargeError,
    );
  });

  it("an event ends at an empty line of CRLF, LF or CR, also split across chunks", async () => {
    for (const [a, b] of [
      ["data: 0123456789\r\n\r", "\n"],
      ["data: 0123456789\r", "\r"],
      ["data: 0123456789\n", "\n"],
    ]) {
      const chunks = [a, b, "data: 0123456789\n\n"] as string[];
      await expect(read("text/event-stream", chunks, 20)).resolves.toBe(chunks.join(""));
    }
    // A CRLF is one line end, not an empty line after a CR: the event goes on.
    await expect(
      read("text/event-stream", ["data: 0123456789\r", "\ndata: 0123456789\n\n"], 20),
    ).rejects.toThrow(AnswerTooLargeError);
  });
});
