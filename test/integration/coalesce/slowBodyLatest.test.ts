import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  gatewayPerTest,
  RECORDER_AGENT,
  readRun,
  recorderAgent,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { runInProcess } from "../../helpers/inProcessCli.js";

/**
 * docs/coalescing-and-cron.md: the latest event of a key is the one received last, the time its request's
 * head came in. An event whose body came in slowly reaches the coalescer after a newer event's group fired:
 * that run superseded it, with or without a route `script`, however long after the script timeout its body
 * took. It ran alone, last, with the stale payload.
 */

const perTest = gatewayPerTest();

const CONFIG = webhookConfig(
  {
    plain: { secret: "INSECURE_NO_AUTH", prompt: "plain {v}", coalesce: { key: "id", window_seconds: 0.2 } },
    scripted: {
      secret: "INSECURE_NO_AUTH",
      script: "pass.sh",
      prompt: "scripted {v}",
      coalesce: { key: "id", window_seconds: 0.2 },
    },
  },
  { rate_limit: 1000, script_timeout_seconds: 1 },
  { agent: recorderAgent() },
);

const sockets: Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
});

/** A request whose head (and the first byte of its body) is sent now, and the rest of its body by `rest()`. */
function slowRequest(gw: TestGateway, path: string, id: string, body: string) {
  const socket = connect(gw.gateway.port, "127.0.0.1");
  sockets.push(socket);
  let received = "";
  const answer = new Promise<Record<string, unknown>>((resolve, reject) => {
    socket.on("data", (data) => {
      received += data.toString("utf8");
      const split = received.indexOf("\r\n\r\n");
      const length = /content-length:\s*(\d+)/i.exec(received.slice(0, split));
      const text = received.slice(split + 4);
      if (split !== -1 && length !== null && Buffer.byteLength(text) >= Number(length[1]))
        resolve(JSON.parse(text) as Record<string, unknown>);
    });
    socket.on("error", reject);
    socket.on("close", () => reject(new Error(`closed before an answer: ${JSON.stringify(received)}`)));
  });
  const sent = new Promise<void>((resolve) =>
    socket.on("connect", () =>
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Request-Id: ${id}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 1)}`,
        () => resolve(),
      ),
    ),
  );
  return {
    sent,
    answer,
    /** Sends the rest of the body a byte at a time, moving the gateway's clock `stepMs` before each. */
    async rest(stepMs: number) {
      for (const char of body.slice(1)) {
        gw.clock.advance(stepMs);
        await new Promise<void>((resolve) => socket.write(char, () => resolve()));
      }
      return answer;
    },
  };
}

describe.each([
  ["without a script", "plain"],
  ["with a script (its body took longer than script_timeout_seconds)", "scripted"],
] as const)(
  "an event whose body came in slowly while a newer event's group fired, on a route %s",
  (_title, route) => {
    it("is answered coalesced and superseded by that run, never run after it with the stale payload", {
      timeout: 60_000,
    }, async () => {
      const gw = await perTest.start({
        fakeTimers: true,
        files: { "agent/recorder.sh": RECORDER_AGENT, "scripts/pass.sh": "#!/bin/sh\ncat\n" },
        config: CONFIG,
      });
      const url = gw.url(`/webhooks/${route}`);
      const body = JSON.stringify({ id: 1, v: "A-first-OLD" });
      const first = slowRequest(gw, `/webhooks/${route}`, "A1", body);
      await first.sent;
      // Answered after A's head was read: its bytes were in before this request's, on the same thread.
      expect((await fetch(gw.url("/health"))).status).toBe(200);
      gw.clock.advance(300);
      expect((await postJson(url, { id: 1, v: "B-second-NEW" }, { "x-request-id": "B1" })).body).toEqual({
        status: "coalesced",
      });
      gw.clock.advance(200);
      expect((await waitForRun(gw, "B1")).prompt).toBe(`${route} B-second-NEW`);
      // A's body is all in 3 s after its head, past the 1 s script timeout.
      expect(await first.rest(Math.ceil(3_000 / body.length))).toEqual({ status: "coalesced" });
      const superseded = gw.logs().find((l) => l.msg.includes("superseded by a run already dispatched"));
      expect(superseded).toMatchObject({ delivery_id: "A1", superseded_by: "B1" });
      gw.clock.advance(5_000);
      expect(
        gw
          .logs()
          .filter((l) => l.msg.includes("coalesced group dispatched"))
          .map((l) => l.delivery_id),
      ).toEqual(["B1"]);
      expect(readRun(gw.home, "A1")).toBeUndefined();
      // The delivery history tells it from an event that joined a group (it joined none).
      await vi.waitFor(
        async () => {
          const listed = await runInProcess(["webhook", "deliveries", route], {
            SVC_HOME: gw.home.dir,
            PATH: process.env.PATH ?? "",
          });
          const row = listed.stdout.split("\n").find((line) => /\sA1\s/.test(line));
          expect(row).toMatch(
            /\s202 coalesced\s+-\s+-\s+superseded by a run already dispatched \(B1\): its key's group had run an event received after this one, so it joined no group and never runs$/,
          );
        },
        { timeout: 10_000, interval: 100 },
      );
    });
  },
);
