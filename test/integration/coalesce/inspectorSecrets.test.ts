import { createHmac } from "node:crypto";
import { createContext, runInContext } from "node:vm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createActor, createMachine } from "xstate";
import { stringify } from "yaml";
import { startInspector } from "../../../src/actors/inspector.js";
import { type Gateway, startGateway } from "../../../src/gateway/index.js";
import { silentLogger } from "../../../src/io/log.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { onPickedPort, postJson } from "../../helpers/http.js";
import { openInspectorClient } from "../../helpers/inspectorClient.js";

/**
 * `--inspect` relays the gateway's inspection events on 127.0.0.1. A coalescing group's context holds its
 * route, secret included; and any web page open in the user's browser can open a WebSocket to loopback
 * (WebSockets have no same-origin rule). Secret fields are redacted from the events, and the relay takes
 * only its own bridge page's origin or clients that send none.
 */
const SECRET = "route-secret-for-inspector-7f3a";
const GLOBAL_SECRET = "global-secret-for-inspector-9c1e";

let home: TempHome | undefined;
let gateway: Gateway | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await gateway?.stop();
  gateway = undefined;
  home?.cleanup();
  home = undefined;
});

describe("--inspect relay: no secrets, no foreign web pages", () => {
  it("a route's secret in a coalescing group's context reaches the relay as [redacted]", async () => {
    const [port, bridge] = await onPickedPort((picked) => startInspector(picked));
    cleanups.push(() => bridge.stop());
    const client = await vi.waitFor(() => openInspectorClient(port), { timeout: 5000, interval: 50 });
    cleanups.push(() => client.socket.terminate());
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: {
          webhook: {
            enabled: true,
            host: "127.0.0.1",
            routes: { gh: { secret: SECRET, coalesce: { key: "n", window_seconds: 60 } } },
          },
        },
      }),
    );
    gateway = await startGateway({
      home: home.dir,
      env: { SVC_HOME: home.dir },
      port: 0,
      logger: silentLogger(),
      inspect: bridge.inspect,
    });
    const body = JSON.stringify({ n: 1 });
    const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
    const res = await postJson(`http://127.0.0.1:${gateway.port}/webhooks/gh`, body, {
      "x-hub-signature-256": signature,
      "x-request-id": "s1",
    });
    expect(res.status).toBe(202);
    await vi.waitFor(
      () => {
        const text = client.messages.join("\n");
        if (!text.includes('"secret":"[redacted]"')) throw new Error("no group context relayed yet");
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(client.messages.join("\n")).not.toContain(SECRET);
  });

  /** A gateway of `config` (and `.env`) watched by a client of its bridge, reloaded once: the client. */
  async function reloadedUnderWatch(config: object, dotEnv?: string) {
    const [port, bridge] = await onPickedPort((picked) => startInspector(picked));
    cleanups.push(() => bridge.stop());
    const client = await vi.waitFor(() => openInspectorClient(port), { timeout: 5000, interval: 50 });
    cleanups.push(() => client.socket.terminate());
    home = tempHome();
    home.write("config.yaml", stringify(config));
    if (dotEnv !== undefined) home.write(".env", dotEnv);
    gateway = await startGateway({
      home: home.dir,
      env: { SVC_HOME: home.dir },
      port: 0,
      logger: silentLogger(),
      inspect: bridge.inspect,
    });
    // SIGHUP: the `routes` actor is sent the new table.
    gateway.reload();
    return client;
  }

  it("a reload's route table reaches the relay with its global secret (globalSecret) [redacted]", async () => {
    const client = await reloadedUnderWatch(
      {
        platforms: {
          webhook: {
            enabled: true,
            host: "127.0.0.1",
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
            secret: "${WEBHOOK_SECRET}",
            routes: { gh: {} },
          },
        },
      },
      `WEBHOOK_SECRET=${GLOBAL_SECRET}\n`,
    );
    await vi.waitFor(
      () => {
        const text = client.messages.join("\n");
        if (!text.includes('"type":"replace"')) throw new Error("no replace event relayed yet");
      },
      { timeout: 10_000, interval: 50 },
    );
    const text = client.messages.join("\n");
    expect(text).toContain('"globalSecret":"[redacted]"');
    expect(text).not.toContain(GLOBAL_SECRET);
  });

  it("a reload's route table lists its routes by name, each route's secrets [redacted]", async () => {
    const extraToken = "deliver-extra-token-for-inspector-2b8d";
    const client = await reloadedUnderWatch({
      platforms: {
        webhook: {
          enabled: true,
          host: "127.0.0.1",
          routes: {
            gh: { secret: SECRET, deliver_extra: { chat_id: "42", api_token: extraToken } },
            ci: { secret: `${SECRET}-ci` },
          },
        },
      },
    });
    const replace = await vi.waitFor(
      () => {
        const found = client.messages
          .map((m) => JSON.parse(m) as { event?: { type?: string; table?: Record<string, unknown> } })
          .find((e) => e.event?.type === "replace");
        if (found === undefined) throw new Error("no replace event relayed yet");
        return found;
      },
      { timeout: 10_000, interval: 50 },
    );
    const routes = replace.event?.table?.staticRoutes as Record<
      string,
      { name: string; secret: string; route: { deliver_extra?: Record<string, unknown> } }
    >;
    expect(Object.keys(routes).sort()).toEqual(["ci", "gh"]);
    expect(routes.gh?.name).toBe("gh");
    expect(routes.gh?.secret).toBe("[redacted]");
    expect(routes.gh?.route.deliver_extra).toEqual({ chat_id: "42", api_token: "[redacted]" });
    const text = client.messages.join("\n");
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(extraToken);
  });

  it("refuses a WebSocket from another web page's origin; its own page and origin-less clients connect", async () => {
    const [port, bridge] = await onPickedPort((picked) => startInspector(picked));
    cleanups.push(() => bridge.stop());
    await vi.waitFor(() => openInspectorClient(port).then((c) => c.socket.terminate()), {
      timeout: 5000,
      interval: 50,
    });
    await expect(openInspectorClient(port, "https://evil.example")).rejects.toThrow("refused: 401");
    await expect(openInspectorClient(port, "http://127.0.0.1.evil.example")).rejects.toThrow("refused: 401");
    const own = await openInspectorClient(port, `http://127.0.0.1:${port}`);
    own.socket.terminate();
    const local = await openInspectorClient(port, `http://localhost:${port}`);
    local.socket.terminate();
  });

  it("its page cannot be framed by another site, and hands the events to the stately.ai frame alone", async () => {
    // A site open in the browser could frame the page (its own origin, so its WebSocket is let in), then
    // navigate the page's inner frame to itself (a top page may navigate any frame under it), announce
    // itself as the inspector and be posted every prompt and payload.
    const [port, bridge] = await onPickedPort((picked) => startInspector(picked));
    cleanups.push(() => bridge.stop());
    const res = await vi.waitFor(() => fetch(`http://127.0.0.1:${port}/`), { timeout: 5000, interval: 50 });
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const script = /<script>([\s\S]*)<\/script>/.exec(await res.text())?.[1] ?? "";
    // The page's script, run with the browser objects it uses.
    const posted: Array<[unknown, string]> = [];
    const frame = { postMessage: (data: unknown, origin: string) => posted.push([data, origin]) };
    const listeners: Array<(e: unknown) => void> = [];
    const sockets: Array<{ onmessage?: (e: { data: string }) => void }> = [];
    runInContext(
      script,
      createContext({
        JSON,
        document: { getElementById: () => ({ contentWindow: frame }) },
        addEventListener: (_type: string, fn: (e: unknown) => void) => listeners.push(fn),
        WebSocket: function WebSocket(this: object) {
          sockets.push(this);
        },
      }),
    );
    const event = (n: number) =>
      sockets[0]?.onmessage?.({ data: JSON.stringify({ type: "@xstate.event", n }) });
    const connected = (origin: string, source: unknown) => {
      for (const fn of listeners) fn({ data: { type: "@statelyai.connected" }, origin, source });
    };
    event(1);
    connected("https://evil.example", frame); // the inner frame navigated to another site
    connected("https://stately.ai", {}); // another window
    expect(posted).toEqual([]);
    connected("https://stately.ai", frame);
    event(2);
    expect(posted).toEqual([
      [{ type: "@xstate.event", n: 1 }, "https://stately.ai"],
      [{ type: "@xstate.event", n: 2 }, "https://stately.ai"],
    ]);
  });

  it("a client's bad frame drops that client only: it is not thrown out of the relay (which stopped the gateway)", async () => {
    const [port, bridge] = await onPickedPort((picked) => startInspector(picked));
    cleanups.push(() => bridge.stop());
    const thrown: unknown[] = [];
    const onUncaught = (err: unknown) => thrown.push(err);
    process.on("uncaughtException", onUncaught);
    cleanups.push(() => process.off("uncaughtException", onUncaught));
    const watcher = await vi.waitFor(() => openInspectorClient(port), { timeout: 5000, interval: 50 });
    cleanups.push(() => watcher.socket.terminate());
    // A handshake, then a text frame a client must mask but does not: ws's receiver refuses it.
    const { connect } = await import("node:net");
    const raw = connect(port, "127.0.0.1");
    cleanups.push(() => raw.destroy());
    raw.write(
      "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    await new Promise<void>((resolve) => raw.once("data", () => resolve()));
    const closed = new Promise<void>((resolve) => raw.once("close", () => resolve()));
    raw.write(Buffer.from([0x81, 0x02, 0x68, 0x69]));
    await closed;
    expect(thrown).toEqual([]);
    // The relay goes on: an actor's events still reach the watching client.
    const actor = createActor(createMachine({ id: "after-bad-frame" }), { inspect: bridge.inspect }).start();
    cleanups.push(() => actor.stop());
    await vi.waitFor(() => expect(watcher.messages.join("\n")).toContain("after-bad-frame"), {
      timeout: 5000,
      interval: 20,
    });
  });

  it("relays the gateway's events only: what another client sends reaches no one, nor a late client", async () => {
    const [port, bridge] = await onPickedPort((picked) => startInspector(picked));
    cleanups.push(() => bridge.stop());
    const watcher = await vi.waitFor(() => openInspectorClient(port), { timeout: 5000, interval: 50 });
    cleanups.push(() => watcher.socket.terminate());
    const forger = await openInspectorClient(port);
    cleanups.push(() => forger.socket.terminate());
    const forged = JSON.stringify({ type: "@xstate.actor", sessionId: "x:99", name: "forged-actor-3c7d" });
    forger.socket.send(forged);
    // What the gateway sends still goes out, after the forged message had its chance to.
    const actor = createActor(createMachine({ id: "real-actor-6b1a" }), { inspect: bridge.inspect }).start();
    cleanups.push(() => actor.stop());
    await vi.waitFor(() => expect(watcher.messages.join("\n")).toContain("real-actor-6b1a"), {
      timeout: 5000,
      interval: 20,
    });
    expect(watcher.messages.join("\n")).not.toContain("forged-actor-3c7d");
    const late = await openInspectorClient(port);
    cleanups.push(() => late.socket.terminate());
    await vi.waitFor(() => expect(late.messages.join("\n")).toContain("real-actor-6b1a"), {
      timeout: 5000,
      interval: 20,
    });
    expect(late.messages.join("\n")).not.toContain("forged-actor-3c7d");
  });
});
