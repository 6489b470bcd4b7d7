import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An OpenAI-compatible Chat Completions server on 127.0.0.1 that answers every run by the event its prompt
 * names (`EVT-<n>`), whatever order concurrent runs' requests come in: a first turn asking for each of
 * `tools` with `{event}` as its arguments (parallel tool calls in one turn), then, once the tool results are
 * in, the reply `reply for EVT-<n>: <each result, joined by " | ">`.
 */
export interface EventModel {
  readonly baseUrl: string;
  close(): Promise<void>;
}

export async function startEventModel(tools: readonly string[]): Promise<EventModel> {
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const { messages } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      messages: Array<{ role: string; content: unknown }>;
    };
    const prompt = JSON.stringify(messages.find((m) => m.role === "user")?.content);
    const event = /EVT-\d+/.exec(prompt)?.[0] ?? "(no event)";
    const results = messages.filter((m) => m.role === "tool").map((m) => m.content);
    const message =
      results.length === 0
        ? {
            role: "assistant",
            content: null,
            tool_calls: tools.map((name, i) => ({
              id: `call_${i}`,
              type: "function",
              function: { name, arguments: JSON.stringify({ event }) },
            })),
          }
        : { role: "assistant", content: `reply for ${event}: ${results.join(" | ")}` };
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        id: "chatcmpl-event",
        object: "chat.completion",
        created: 1,
        model: "m",
        choices: [{ index: 0, message, finish_reason: results.length === 0 ? "tool_calls" : "stop" }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
