import { createWebSocketReceiver } from "@statelyai/inspect";
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AnyActorRef, InspectionEvent } from "xstate";
import { stringify } from "yaml";
import { startInspector } from "../../../src/actors/inspector.js";
import { type Gateway, startGateway } from "../../../src/gateway/index.js";
import { pinoOptions, silentLogger } from "../../../src/io/log.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { onPickedPort, postJson } from "../../helpers/http.js";

let home: TempHome;
let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  home.cleanup();
});

const CONFIG = {
  platforms: {
    webhook: {
      enabled: true,
      host: "127.0.0.1",
      routes: {
        gh: { secret: "INSECURE_NO_AUTH", coalesce: { key: "pull_request.number", window_seconds: 60 } },
      },
    },
  },
};

async function start(inspect: (event: InspectionEvent) => void) {
  home = tempHome();
  home.write("config.yaml", stringify(CONFIG));
  gateway = await startGateway({
    home: home.dir,
    env: { SVC_HOME: home.dir },
    port: 0,
    logger: silentLogger(),
    inspect,
  });
  return `http://127.0.0.1:${gateway.port}/webhooks/gh`;
}

describe("--inspect: the root system's inspection events", () => {
  it("an injected inspector sees the coalescer, each coalescing group actor and its offer/flush events", async () => {
    const events: InspectionEvent[] = [];
    const url = await start((e) => events.push(e));
    await postJson(url, { pull_request: { number: 5 } }, { "x-request-id": "i1" });
    await postJson(url, { pull_request: { number: 5 } }, { "x-request-id": "i2" });
    const actorIds = events
      .filter((e) => e.type === "@xstate.actor")
      .map((e) => (e.actorRef as AnyActorRef).id);
    expect(actorIds).toEqual(expect.arrayContaining(["coalescer", "cron", "runs", "routes"]));
    const group = actorIds.find((id) => id.startsWith("coalesce-1:gh:5"));
    expect(group).toBeDefined();
    const groupEvents = () =>
      events
        .filter((e) => e.type === "@xstate.event" && (e.actorRef as AnyActorRef).id === group)
        .map((e) => (e as { event: { type: string } }).event.type);
    expect(groupEvents()).toContain("offer");
    await gateway?.stop();
    gateway = undefined;
    expect(groupEvents()).toContain("flush");
  });

  it("the WebSocket bridge relays those events to a client (what the Stately UI or any ws client reads)", async () => {
    const [port, bridge] = await onPickedPort((picked) => startInspector(picked));
    const received: string[] = [];
    const receiver = createWebSocketReceiver({ server: `ws://127.0.0.1:${port}` });
    receiver.subscribe((event) =>
      received.push(`${event.type}:${(event as { sessionId?: string }).sessionId ?? ""}`),
    );
    try {
      const url = await start(bridge.inspect);
      await postJson(url, { pull_request: { number: 9 } }, { "x-request-id": "w1" });
      await vi.waitFor(
        () => {
          if (!received.some((r) => r.startsWith("@xstate.actor"))) throw new Error("no events relayed yet");
        },
        { timeout: 10_000, interval: 50 },
      );
    } finally {
      bridge.stop();
    }
  });
});

describe("--inspect relay exposure", () => {
  it("listens on loopback only: payload-bearing events never reach another interface", async () => {
    const { networkInterfaces } = await import("node:os");
    const { connect } = await import("node:net");
    // Where it listens is a gateway log line (time and level, stdout and gateway.log alike), not bare stdout.
    const lines: Array<{ level: number; msg: string }> = [];
    const logger = pino(pinoOptions("info"), { write: (line: string) => lines.push(JSON.parse(line)) });
    const [port, bridge] = await onPickedPort((picked) => startInspector(picked, logger));
    try {
      expect(lines).toEqual([
        expect.objectContaining({
          level: 30,
          msg: `[inspect] Stately inspector on http://127.0.0.1:${port} (raw events: ws://127.0.0.1:${port}); loopback only`,
        }),
      ]);
      expect(bridge.url).toBe(`http://127.0.0.1:${port}`);
      const reach = (host: string) =>
        new Promise<boolean>((resolve) => {
          const socket = connect({ host, port }, () => {
            socket.destroy();
            resolve(true);
          });
          socket.on("error", () => resolve(false));
        });
      await vi.waitFor(async () => expect(await reach("127.0.0.1")).toBe(true), { timeout: 10_000 });
      const external = Object.values(networkInterfaces())
        .flat()
        .filter((a) => a !== undefined && a.family === "IPv4" && !a.internal)
        .map((a) => a?.address as string);
      for (const address of external) expect(await reach(address)).toBe(false);
    } finally {
      bridge.stop();
    }
  });

  it("a port another program holds stops the start with a message naming --inspect, not an internal error", async () => {
    const { createServer } = await import("node:net");
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const port = (holder.address() as { port: number }).port;
    try {
      await expect(startInspector(port)).rejects.toThrow(
        `--inspect: cannot listen on 127.0.0.1:${port} (the port is in use) — choose another port: --inspect <port>`,
      );
    } finally {
      holder.close();
    }
  });
});
