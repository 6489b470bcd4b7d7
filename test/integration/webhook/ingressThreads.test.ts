import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { connect, createServer } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { restartOnlyChanges } from "../../../src/config/restartOnly.js";
import { configSchema } from "../../../src/config/schema.js";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { inHome, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";

/** docs/operations.md, "Ingress threads": `platforms.webhook.workers: N`. */

const OPEN = "INSECURE_NO_AUTH";
const gateways: TestGateway[] = [];
const homes: TempHome[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const gw of gateways.splice(0)) await gw.stop().catch(() => {});
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const home of homes.splice(0)) home.cleanup();
});

const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen({ host: "127.0.0.1", port, exclusive: true }, () => probe.close(() => resolve(true)));
  });

const refusesConnections = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("error", () => resolve(true));
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
  });

/** A POST on the agent's one connection: its answer, and whether it went on a connection already used. */
function keptAlivePost(agent: Agent, port: number, id: string, method = "POST", path = "/webhooks/open") {
  return new Promise<{ status: number; body: string; reused: boolean }>((resolve, reject) => {
    const req = httpRequest(
      {
        agent,
        port,
        host: "127.0.0.1",
        method,
        path,
        headers: { "content-type": "application/json", "X-Request-ID": id },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, reused: req.reusedSocket }));
      },
    );
    req.on("error", reject);
    req.end(method === "POST" ? "{}" : undefined);
  });
}

describe("uWS on ingress threads (platforms.webhook.workers)", () => {
  it("serves events across the threads, and a stop lets go of the port and ends the threads", async () => {
    const gw = await startTestGateway({
      http: "uws-threads",
      config: webhookConfig(
        { open: { secret: OPEN } },
        { rate_limit: 1000 },
        { agent: { provider: "echo" } },
      ),
    });
    gateways.push(gw);
    // Many connections at once: the kernel spreads them over both threads; each event is answered once.
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        postJson(gw.url("/webhooks/open"), { n: i }, { "X-Request-ID": `thread-${i}` }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(202));
    expect(new Set(answers.map((a) => (a.body as { delivery_id: string }).delivery_id)).size).toBe(40);
    const port = gw.gateway.port;
    expect(await canListen(port)).toBe(false);
    await gw.stop();
    gateways.splice(0);
    expect(await canListen(port)).toBe(true);
  });

  it.each(["uws", "uws-threads", "node"] as const)(
    "%s: while a stop waits for a run, a request on an open connection is answered 503, not reset; /health says 503 too",
    async (http) => {
      const gw = await startTestGateway({
        http,
        config: webhookConfig(
          { open: { secret: OPEN } },
          {},
          // The run waits until the test lets it end, so the stop waits in its drain.
          {
            agent: {
              provider: "command",
              command: [
                "sh",
                "-c",
                'touch "$0/started"; while [ -d "$0" ] && [ ! -f "$0/release" ]; do sleep 0.05; done',
                inHome(""),
              ],
            },
          },
        ),
      });
      gateways.push(gw);
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const post = (id: string) => keptAlivePost(agent, gw.gateway.port, id);
        expect(await post("before")).toMatchObject({ status: 202, reused: false });
        await vi.waitFor(() => expect(existsSync(join(gw.home.dir, "started"))).toBe(true), {
          timeout: 10_000,
        });
        const stopped = gw.stop();
        gateways.splice(0);
        await vi.waitFor(async () => expect(await refusesConnections(gw.gateway.port)).toBe(true), {
          timeout: 10_000,
        });
        expect(await post("during")).toEqual({
          status: 503,
          body: '{"error":"Shutting down"}',
          reused: true,
        });
        // A health check on a kept-alive connection must not call a stopping gateway healthy.
        expect(await keptAlivePost(agent, gw.gateway.port, "health", "GET", "/health")).toEqual({
          status: 503,
          body: '{"error":"Shutting down"}',
          reused: true,
        });
        gw.home.write("release", "");
        await stopped;
      } finally {
        agent.destroy();
      }
    },
  );

  it("a reload that raises max_body_bytes lets the very next larger body through", async () => {
    const config = (max: number) =>
      webhookConfig(
        { open: { secret: OPEN } },
        { rate_limit: 1000, max_body_bytes: max },
        { agent: { provider: "echo" } },
      );
    const gw = await startTestGateway({ http: "uws-threads", config: config(1024) });
    gateways.push(gw);
    const big = { pad: "x".repeat(2000) };
    expect((await postJson(gw.url("/webhooks/open"), big, { "X-Request-ID": "big-1" })).status).toBe(413);
    gw.home.write("config.yaml", stringify(config(4096)));
    gw.gateway.reload();
    expect(await postJson(gw.url("/webhooks/open"), big, { "X-Request-ID": "big-2" })).toMatchObject({
      status: 202,
      body: { status: "accepted" },
    });
  });

  it("a port another program holds refuses the start, as with one listener", async () => {
    // A program that closes what it accepts: the failed start asks what holds the port (GET /health), and
    // a connection left open on a server that never reads would hold its close.
    const holder = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) =>
      holder.listen({ host: "127.0.0.1", port: 0, exclusive: true }, resolve),
    );
    const port = (holder.address() as { port: number }).port;
    try {
      const home = tempHome();
      homes.push(home);
      home.write(
        "config.yaml",
        stringify(
          webhookConfig({ open: { secret: OPEN } }, { port, workers: 2 }, { agent: { provider: "echo" } }),
        ),
      );
      const { startGateway } = await import("../../../src/gateway/index.js");
      const { createLogger } = await import("../../../src/io/log.js");
      await expect(
        startGateway({
          home: home.dir,
          env: { PATH: process.env.PATH ?? "" },
          logger: createLogger({ stdout: false }),
        }),
      ).rejects.toThrow(`cannot listen on 127.0.0.1:${port}`);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it("the CLI gateway with ingress threads answers, then exits 0 on SIGTERM", async () => {
    const home = tempHome();
    homes.push(home);
    home.write(
      "config.yaml",
      stringify(webhookConfig({ open: { secret: OPEN } }, { workers: 2 }, { agent: { provider: "echo" } })),
    );
    const { child, port, exited, output } = await startCliGateway(home, children);
    expect(
      await postJson(`http://127.0.0.1:${port}/webhooks/open`, {}, { "X-Request-ID": "cli-1" }),
    ).toMatchObject({
      status: 202,
    });
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(output()).not.toMatch(/Assertion|open handles/);
  });

  it("workers with http_server: node is named in one WARN, the config's (which names the key under extra), not twice", async () => {
    const gw = await startTestGateway({
      config: `platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    extra:\n      http_server: node\n      workers: 2\n    routes:\n      open: {secret: ${OPEN}}\n`,
    });
    gateways.push(gw);
    expect((await postJson(gw.url("/webhooks/open"), { a: 1 })).status).toBe(202);
    const workers = gw.logs().filter((line) => line.msg.includes("workers"));
    expect(workers.map((line) => line.msg)).toEqual([
      expect.stringContaining(
        "platforms.webhook.extra.workers is 2, but platforms.webhook.extra.http_server is node, which has no ingress threads",
      ),
    ]);
  });

  it("workers is a whole number from 0 to 64, and a reload cannot change it", () => {
    const config = (workers: unknown) =>
      configSchema.parse(webhookConfig({ open: { secret: OPEN } }, { workers }));
    expect(() => config(-1)).toThrow(/workers/);
    expect(() => config(1.5)).toThrow(/workers/);
    expect(() => config(65)).toThrow(/workers/);
    expect(config(undefined).platforms.webhook.workers).toBe(0);
    expect(restartOnlyChanges(config(0), config(2))).toEqual(["platforms.webhook.workers"]);
  });
});
