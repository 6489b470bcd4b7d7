import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocket, WebSocketServer } from "ws";
import { SvcError } from "../errors.js";
import { terminalText } from "./terminalText.js";

/** How long a client whose frame was refused has to read its close frame before its socket is ended. */
const CLOSE_GRACE_MS = 2000;

export interface InspectRelay {
  readonly url: string;
  /** Where the gateway's inspector sends its events: the only connection whose messages are relayed. */
  readonly sourceUrl: string;
  stop(): void;
}

const BUFFERED_EVENTS = 200;

/**
 * Bytes of events a client may have waiting in its socket. One that reads nothing (a suspended browser
 * tab, a `wscat` stopped with Ctrl-Z) would otherwise hold every later event in the gateway's memory until
 * it ran out; past this it is disconnected (connecting again, it gets the live actors and last 200 events).
 */
export const MAX_CLIENT_BACKLOG_BYTES = 16 * 1024 * 1024;

/** A frame a watching client may send (it has nothing to say): past it the client is closed with 1009. */
const WATCHER_MAX_FRAME = 64 * 1024;
/**
 * A frame of the gateway's events: a coalescing group's event carries its prompt, whole with `{__raw__}`
 * and a raised `max_body_bytes`; past ws's 100 MiB default the relay closed the gateway's own connection,
 * which its inspector never opens again (inspection stopped for the rest of the run).
 */
const SOURCE_MAX_FRAME = 1024 * 1024 * 1024;

/**
 * The registration (`@xstate.actor`) and latest snapshot of each actor still running, by session id: the
 * last 200 events alone would show a client that connects after a while (the browser opened once the
 * gateway runs) none of the long-lived actors (`gateway`, `routes`, `runs`, `mcp:<server>`, ...), only the
 * events of those it has never heard of. An actor leaves once a snapshot says it is no longer active.
 */
class LiveActors {
  private readonly actors = new Map<string, { actor: string; snapshot?: string }>();

  track(message: string): void {
    // Most messages are events (`@xstate.event`): not parsed again.
    if (!message.includes('"@xstate.actor"') && !message.includes('"@xstate.snapshot"')) return;
    let event: unknown;
    try {
      event = JSON.parse(message);
    } catch {
      return; // not an inspection event: relayed, not kept
    }
    if (typeof event !== "object" || event === null) return;
    const { type, sessionId, snapshot } = event as {
      type?: unknown;
      sessionId?: unknown;
      snapshot?: unknown;
    };
    if (typeof sessionId !== "string") return;
    if (type === "@xstate.actor") {
      this.actors.set(sessionId, { actor: message });
      return;
    }
    const entry = this.actors.get(sessionId);
    if (type !== "@xstate.snapshot" || entry === undefined) return;
    const status = (snapshot as { status?: unknown } | null)?.status;
    if (status !== undefined && status !== "active") this.actors.delete(sessionId);
    else entry.snapshot = message;
  }

  /** In the order the actors started (a parent before its children), each with its latest snapshot. */
  *messages(): Iterable<string> {
    for (const { actor, snapshot } of this.actors.values()) {
      yield actor;
      if (snapshot !== undefined) yield snapshot;
    }
  }
}

/**
 * The page stately.ai/inspect is embedded in; it relays the WebSocket's events into the iframe. Only once
 * its own iframe says so from a stately.ai origin, and only to that origin: a frame navigated elsewhere
 * (by a page that framed this one, which `bridgeHeaders` also forbids) is posted nothing.
 */
function bridgePage(port: number): string {
  return `<!DOCTYPE html><html><head><title>svc — Stately inspector</title>
<style>html,body,iframe{margin:0;width:100%;height:100%;border:none}</style></head>
<body><iframe id="inspector" src="https://stately.ai/inspect"></iframe><script>
const frame = document.getElementById("inspector"); const pending = []; let origin;
const stately = (o) => o === "https://stately.ai" || (o.startsWith("https://") && o.endsWith(".stately.ai"));
addEventListener("message", (e) => { if (origin === undefined && e.source === frame.contentWindow && stately(e.origin)
  && e.data && e.data.type === "@statelyai.connected") {
  origin = e.origin; for (const ev of pending) frame.contentWindow.postMessage(ev, origin); pending.length = 0; } });
const ws = new WebSocket("ws://127.0.0.1:${port}");
ws.onmessage = (e) => { const ev = JSON.parse(e.data); if (origin !== undefined) frame.contentWindow.postMessage(ev, origin); else pending.push(ev); };
</script></body></html>`;
}

/** No other site may frame the bridge page: framing it, a page could navigate its iframe to itself. */
const bridgeHeaders = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": "frame-ancestors 'none'",
  "x-frame-options": "DENY",
};

/**
 * The inspector's WebSocket relay, bound to loopback only: inspection events carry prompts and payloads,
 * so they never leave the machine. The events the gateway sends to `sourceUrl` go to every other client
 * (what those send is dropped); the actors still running and the last 200 events are replayed to a client
 * that connects late; a client that falls `maxBacklogBytes` behind (besides its replay) is disconnected.
 * Resolves once it listens; a port it cannot take (another program on it) stops the start with a message
 * naming the flag, before the gateway starts.
 */
export async function startInspectRelay(
  port: number,
  host = "127.0.0.1",
  maxBacklogBytes = MAX_CLIENT_BACKLOG_BYTES,
): Promise<InspectRelay> {
  const http = createServer((_req, res) => {
    res.writeHead(200, bridgeHeaders);
    res.end(bridgePage(port));
  });
  // Listening before the WebSocket server is attached: it would re-throw the listen error as its own.
  await new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => {
      const why = err.code === "EADDRINUSE" ? "the port is in use" : err.message;
      reject(
        new SvcError(
          "startup_refused",
          `--inspect: cannot listen on ${host}:${port} (${why}) — choose another port: --inspect <port>`,
        ),
      );
    };
    http.once("error", failed);
    http.listen(port, host, () => {
      http.off("error", failed);
      resolve();
    });
  });
  // A browser lets any web page open a WebSocket to 127.0.0.1 (no same-origin rule for WebSockets), so
  // only the bridge page's own origin and clients sending none (the gateway, ws tools) may connect.
  const verifyClient = ({ origin }: { origin?: string }) => {
    if (origin === undefined || origin === "") return true;
    const own = (http.address() as AddressInfo | null)?.port ?? port;
    return origin === `http://127.0.0.1:${own}` || origin === `http://localhost:${own}`;
  };
  // The gateway's own inspector connects on a path only it knows; the events come from it alone. Any
  // other client (the page, wscat, any local process) watches: what it sends is dropped, so it can neither
  // show forged actors to the others nor fill the relay's memory with what it keeps for late clients.
  const sourcePath = Buffer.from(`/${randomBytes(16).toString("hex")}`);
  const isSource = (path: string | undefined) => {
    const given = Buffer.from(path ?? "");
    return given.length === sourcePath.length && timingSafeEqual(given, sourcePath);
  };
  // A watcher's frame past WATCHER_MAX_FRAME closes it (1009) instead of being read whole to be dropped
  // (ws reads up to 100 MiB by default); the gateway's events are as large as the prompts they carry.
  const watching = new WebSocketServer({ noServer: true, verifyClient, maxPayload: WATCHER_MAX_FRAME });
  const sourcing = new WebSocketServer({ noServer: true, verifyClient, maxPayload: SOURCE_MAX_FRAME });
  http.on("upgrade", (request, socket, head) => {
    const server = isSource(request.url) ? sourcing : watching;
    server.handleUpgrade(request, socket, head, (ws) => server.emit("connection", ws, request));
  });
  const recent: string[] = [];
  const live = new LiveActors();
  // What a client was sent as it connected (bounded by what the relay keeps) may wait on top of the bound:
  // large events would otherwise disconnect a late client before it could read its replay.
  const replayBytes = new WeakMap<WebSocket, number>();
  const relay = (client: WebSocket, message: string) => {
    if (client.bufferedAmount > maxBacklogBytes + (replayBytes.get(client) ?? 0)) client.terminate();
    else client.send(message);
  };
  // A client's bad frame (unmasked, oversized, invalid UTF-8) is an 'error' on its socket: without a
  // listener it would be thrown from the socket's data handler and stop the gateway. `ws` has then sent its
  // close frame (1002, 1007, 1009) and reads the rest of the input away; ended at once, the socket would be
  // reset with that input unread and the close frame lost. The client is dropped after a grace instead.
  const dropOnError = (socket: WebSocket) =>
    socket.on("error", () => setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref());
  sourcing.on("connection", (socket) => {
    dropOnError(socket);
    socket.on("message", (data) => {
      // JSON escapes only C0 controls: a payload's C1 controls (U+009B, an 8-bit CSI), bidi overrides and
      // line separators would reach a terminal client (wscat) as they are. Escaped, the JSON means the same.
      const message = terminalText(data.toString());
      live.track(message);
      recent.push(message);
      if (recent.length > BUFFERED_EVENTS) recent.shift();
      for (const client of watching.clients) if (client.readyState === WebSocket.OPEN) relay(client, message);
    });
  });
  watching.on("connection", (socket) => {
    dropOnError(socket);
    // The actors still running first (also those registered before the last 200 events), then those.
    const kept = new Set(recent);
    const replay = [...live.messages()].filter((message) => !kept.has(message)).concat(recent);
    replayBytes.set(
      socket,
      replay.reduce((bytes, message) => bytes + Buffer.byteLength(message), 0),
    );
    for (const message of replay) socket.send(message);
  });
  return {
    url: `http://${host}:${port}`,
    sourceUrl: `ws://${host}:${port}${sourcePath.toString()}`,
    stop() {
      for (const server of [sourcing, watching]) {
        for (const client of server.clients) client.terminate();
        server.close();
      }
      http.close();
    },
  };
}
