import { writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type FixtureHttp, startSse, startStreamableHttp } from "../../fixtures/mcp/httpServers.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";

/** A loopback proxy in front of `target` that keeps every request body it passes on. */
async function recordingProxy(
  target: FixtureHttp,
): Promise<{ url: string; bodies: string[]; server: Server }> {
  const upstream = new URL(target.url);
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => bodies.push(Buffer.concat(chunks).toString("utf8")));
    const out = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}${upstream.pathname}`, bodies, server };
}

let home: TempHome;
const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
  home?.cleanup();
});

describe("svc mcp call: a call that times out right before the CLI closes the session", () => {
  for (const [transport, start] of [
    ["sse", startSse],
    ["streamable-http", startStreamableHttp],
  ] as const) {
    it(`still sends notifications/cancelled with the call's request id (${transport})`, async () => {
      home = tempHome();
      const fixture = await start();
      closing.push(() => fixture.close());
      const proxy = await recordingProxy(fixture);
      closing.push(() => new Promise((resolve) => proxy.server.close(resolve)));
      const entry = { url: proxy.url, timeout: 0.5, ...(transport === "sse" ? { transport: "sse" } : {}) };
      writeFileSync(join(home.dir, "config.yaml"), stringify({ mcp_servers: { cancelprobe: entry } }));
      const result = await runInProcess(["mcp", "call", "cancelprobe", "slow", "--args", '{"ms":30000}'], {
        PATH: process.env.PATH ?? "",
        HOME: home.dir,
        SVC_HOME: home.dir,
      });
      expect(result.code).toBe(1);
      // The advice after it: which setting to raise, or that the server may be stuck.
      expect(result.stderr).toMatch(
        /"slow" did not answer within 0.5 s \(timeout\) — if the server is slow on this tool, raise mcp_servers\.cancelprobe\.timeout in config\.yaml; otherwise the server may be stuck: check its own log\n/,
      );
      const call = proxy.bodies
        .map((b) => (b === "" ? undefined : JSON.parse(b)))
        .find((m) => m?.method === "tools/call");
      const cancelled = proxy.bodies
        .map((b) => (b === "" ? undefined : JSON.parse(b)))
        .find((m) => m?.method === "notifications/cancelled");
      expect(call?.id).toBeTypeOf("number");
      expect(cancelled?.params?.requestId).toBe(call.id);
    });
  }
});
