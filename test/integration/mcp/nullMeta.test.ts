import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { entry, useHubs } from "./harness.js";

/**
 * A server that writes every unset field as `null` (pydantic's model_dump() without exclude_none) sends
 * `"_meta": null` in each result: the SDK's message schema takes `_meta` as an object only.
 */
const ANSWER = `(message) => {
  const result =
    message.method === "initialize"
      ? { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "py", version: "1" } }
      : message.method === "tools/list"
        ? { tools: [{ name: "t", inputSchema: { type: "object" } }] }
        : message.method === "tools/call"
          ? { content: [{ type: "text", text: "ran" }] }
          : {};
  return { jsonrpc: "2.0", id: message.id, result: { ...result, _meta: null } };
}`;

const STDIO = `const answer = ${ANSWER};
let buffered = "";
process.stdin.on("data", (chunk) => {
  buffered += chunk;
  let end;
  while ((end = buffered.indexOf("\\n")) >= 0) {
    const message = JSON.parse(buffered.slice(0, end));
    buffered = buffered.slice(end + 1);
    if (message.id !== undefined) process.stdout.write(JSON.stringify(answer(message)) + "\\n");
  }
});`;

const hubs = useHubs();
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

async function httpServer(): Promise<string> {
  const answer = new Function(`return ${ANSWER}`)() as (message: { id?: unknown }) => unknown;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== "POST") return void res.writeHead(405).end();
    const message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id?: unknown };
    if (message.id === undefined) return void res.writeHead(202).end();
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer(message)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe('a server writing "_meta": null in every result', () => {
  it("connects, lists its tools and answers a call, on stdio and on Streamable HTTP", async () => {
    const hub = hubs.hub(hubs.home, {
      stdio: entry({ command: process.execPath, args: ["-e", STDIO] }),
      http: entry({ url: await httpServer(), skip_preflight: true }),
    });
    for (const name of ["stdio", "http"]) {
      const status = await hub.settled(name);
      expect([name, status.state, status.lastError]).toEqual([name, "connected", undefined]);
      const result = (await hub.call(name, "t", {})) as { content: Array<{ text: string }> };
      expect([name, result.content[0]?.text]).toEqual([name, "ran"]);
    }
  });
});
