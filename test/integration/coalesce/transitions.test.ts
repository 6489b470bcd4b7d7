import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { coalesceNote } from "../../../src/actors/coalescer.js";
import {
  RECORDER_AGENT,
  readRun,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/** Spec 3.1, row by row, through the real gateway on loopback; every coalescing timer is the fake clock's. */

let gw: TestGateway | undefined;
let servers: Server[] = [];
function live(): TestGateway {
  if (gw === undefined) throw new Error("no gateway running");
  return gw;
}
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  for (const server of servers) server.close();
  servers = [];
});

const OPEN = "INSECURE_NO_AUTH";

/** A gateway whose route `pr` coalesces on `pr.number` with the default window (30 s) and max wait (300 s). */
function start(routes: Record<string, Record<string, unknown>>, rest: Record<string, unknown> = {}) {
  return startTestGateway({
    fakeTimers: true,
    files: { "agent/recorder.sh": RECORDER_AGENT },
    config: webhookConfig(routes, { rate_limit: 100_000 }, { agent: recorderAgent(), ...rest }),
  });
}
const prRoute = (extra: Record<string, unknown> = {}) => ({
  pr: { secret: OPEN, prompt: "PR {pr.number} rev {rev}", coalesce: { key: "pr.number" }, ...extra },
});
const post = (id: string, body: unknown, route = "pr") =>
  postJson(live().url(`/webhooks/${route}`), body, { "x-request-id": id });
/** Groups dispatched so far (the coalescer logs each one synchronously when it fires). */
const dispatched = () =>
  live()
    .logs()
    .filter((l) => l.msg.endsWith("coalesced group dispatched"))
    .map((l) => ({ id: l.delivery_id, superseded: l.superseded, reason: l.reason }));

describe("spec 3.1 coalescing group, over HTTP with a fake clock", () => {
  it("none → pending: 202 {status: coalesced}; the default quiet window is 30 s; a lone event runs unchanged", async () => {
    gw = await start(prRoute());
    const answer = await post("e1", { pr: { number: 7 }, rev: 1 });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ status: "coalesced" });
    gw.clock.advance(29_999);
    expect(dispatched()).toEqual([]);
    gw.clock.advance(1);
    expect(dispatched()).toEqual([{ id: "e1", superseded: 0, reason: "quiet_window" }]);
    expect((await waitForRun(gw, "e1")).prompt).toBe("PR 7 rev 1");
  });

  it("pending + same key: 202 coalesced, the new event replaces the pending one and the quiet timer restarts", async () => {
    gw = await start(prRoute());
    expect((await post("e1", { pr: { number: 7 }, rev: 1 })).status).toBe(202);
    gw.clock.advance(20_000);
    expect(await post("e2", { pr: { number: 7 }, rev: 2 })).toMatchObject({
      status: 202,
      body: { status: "coalesced" },
    });
    gw.clock.advance(20_000); // 40 s after the first event, 20 s after the second: still quiet
    expect(dispatched()).toEqual([]);
    expect((await post("e3", { pr: { number: 7 }, rev: 3 })).body).toEqual({ status: "coalesced" });
    gw.clock.advance(29_999);
    expect(dispatched()).toEqual([]);
    gw.clock.advance(1);
    expect(dispatched()).toEqual([{ id: "e3", superseded: 2, reason: "quiet_window" }]);
    const run = await waitForRun(gw, "e3");
    expect(run.prompt).toBe(`${coalesceNote(2)}\n\nPR 7 rev 3`);
    expect(run.prompt).toMatch(/\b2 earlier events\b.*superseded/);
    expect([readRun(gw.home, "e1"), readRun(gw.home, "e2")]).toEqual([undefined, undefined]);
  });

  it("max_wait_seconds (default 300) counts from the group's first event and is not restarted by new events", async () => {
    gw = await start(prRoute());
    for (let i = 0; i < 15; i++) {
      if (i > 0) gw.clock.advance(20_000);
      expect((await post(`m${i}`, { pr: { number: 9 }, rev: i })).status).toBe(202);
    }
    gw.clock.advance(19_999); // 299.999 s after the first event; the quiet window never elapsed
    expect(dispatched()).toEqual([]);
    gw.clock.advance(1);
    expect(dispatched()).toEqual([{ id: "m14", superseded: 14, reason: "max_wait" }]);
    expect((await waitForRun(gw, "m14")).prompt).toBe(`${coalesceNote(14)}\n\nPR 9 rev 14`);
    // The dispatched group is gone: the next event of that key opens a new one.
    expect((await post("n1", { pr: { number: 9 }, rev: 15 })).body).toEqual({ status: "coalesced" });
    gw.clock.advance(30_000);
    expect((await waitForRun(gw, "n1")).prompt).toBe("PR 9 rev 15");
  });

  it("window_seconds and max_wait_seconds are honoured when set", async () => {
    gw = await start(prRoute({ coalesce: { key: "pr.number", window_seconds: 5, max_wait_seconds: 12 } }));
    await post("w1", { pr: { number: 1 }, rev: 1 });
    gw.clock.advance(4_000);
    await post("w2", { pr: { number: 1 }, rev: 2 });
    gw.clock.advance(4_000);
    await post("w3", { pr: { number: 1 }, rev: 3 });
    gw.clock.advance(3_999);
    expect(dispatched()).toEqual([]);
    gw.clock.advance(1);
    expect(dispatched()).toEqual([{ id: "w3", superseded: 2, reason: "max_wait" }]);
    await post("w4", { pr: { number: 1 }, rev: 4 });
    gw.clock.advance(5_000);
    expect(dispatched().at(-1)).toEqual({ id: "w4", superseded: 0, reason: "quiet_window" });
  });

  it("window_seconds: 0 is accepted: events are answered 202 coalesced and each group fires at the next tick", async () => {
    gw = await start(prRoute({ coalesce: { key: "pr.number", window_seconds: 0 } }));
    expect((await post("z1", { pr: { number: 1 }, rev: 1 })).body).toEqual({ status: "coalesced" });
    gw.clock.advance(0);
    expect(dispatched()).toEqual([{ id: "z1", superseded: 0, reason: "quiet_window" }]);
  });

  it("one group per (route, rendered key): a template key, two keys, two routes", async () => {
    const key = { key: "{repo}#{pr.number}" };
    gw = await start({
      a: { secret: OPEN, prompt: "a {repo}#{pr.number} {rev}", coalesce: key },
      b: { secret: OPEN, prompt: "b {repo}#{pr.number} {rev}", coalesce: key },
    });
    const send = (id: string, route: string, repo: string, n: number, rev: number) =>
      post(id, { repo, pr: { number: n }, rev }, route);
    for (const [id, route, repo, n, rev] of [
      ["k1", "a", "o/x", 1, 1],
      ["k2", "a", "o/x", 2, 1],
      ["k3", "a", "o/y", 1, 1],
      ["k4", "b", "o/x", 1, 1],
      ["k5", "a", "o/x", 1, 2],
    ] as const)
      expect((await send(id, route, repo, n, rev)).body).toEqual({ status: "coalesced" });
    gw.clock.advance(30_000);
    expect(dispatched().sort((x, y) => String(x.id).localeCompare(String(y.id)))).toEqual([
      { id: "k2", superseded: 0, reason: "quiet_window" },
      { id: "k3", superseded: 0, reason: "quiet_window" },
      { id: "k4", superseded: 0, reason: "quiet_window" },
      { id: "k5", superseded: 1, reason: "quiet_window" },
    ]);
    expect((await waitForRun(gw, "k5")).prompt).toBe(`${coalesceNote(1)}\n\na o/x#1 2`);
    expect((await waitForRun(gw, "k4")).prompt).toBe("b o/x#1 1");
  });

  it("the key is the value as sent: 64-bit ids that JavaScript rounds to one number are two groups", async () => {
    gw = await start({
      big: { secret: OPEN, prompt: "id {issue.id} rev {rev}", coalesce: { key: "issue.id" } },
    });
    // Both parse to 9007199254740992 in JavaScript; a sender (Sentry, Discord snowflakes) means two entities.
    for (const [id, n, rev] of [
      ["b1", "9007199254740993", 1],
      ["b2", "9007199254740992", 1],
      ["b3", "9007199254740993", 2],
    ] as const) {
      const body = `{"issue":{"id":${n}},"rev":${rev}}`;
      expect((await post(id, body, "big")).body).toEqual({ status: "coalesced" });
    }
    gw.clock.advance(30_000);
    expect(dispatched().sort((x, y) => String(x.id).localeCompare(String(y.id)))).toEqual([
      { id: "b2", superseded: 0, reason: "quiet_window" },
      { id: "b3", superseded: 1, reason: "quiet_window" },
    ]);
    expect((await waitForRun(gw, "b2")).prompt).toBe("id 9007199254740992 rev 1");
    expect((await waitForRun(gw, "b3")).prompt).toBe(`${coalesceNote(1)}\n\nid 9007199254740993 rev 2`);
  });

  it("{event_type} in a key is the resolved event type (the header's, as in prompts) when the payload has none", async () => {
    gw = await start({
      typed: {
        secret: OPEN,
        prompt: "{event_type} {pr.number} {rev}",
        coalesce: { key: "{event_type}#{pr.number}" },
      },
    });
    const typed = (id: string, event: string, rev: number) =>
      postJson(
        live().url("/webhooks/typed"),
        { pr: { number: 1 }, rev },
        { "x-request-id": id, "x-github-event": event },
      );
    for (const [id, event, rev] of [
      ["t1", "pull_request", 1],
      ["t2", "pull_request_review", 1],
      ["t3", "pull_request", 2],
    ] as const)
      expect((await typed(id, event, rev)).body).toEqual({ status: "coalesced" });
    gw.clock.advance(30_000);
    expect(dispatched().sort((x, y) => String(x.id).localeCompare(String(y.id)))).toEqual([
      { id: "t2", superseded: 0, reason: "quiet_window" },
      { id: "t3", superseded: 1, reason: "quiet_window" },
    ]);
    expect((await waitForRun(gw, "t2")).prompt).toBe("pull_request_review 1 1");
  });

  it("none + key does not resolve → dispatched at once (202 accepted), never grouped, the pending group untouched", async () => {
    gw = await start({
      ...prRoute(),
      tpl: { secret: OPEN, prompt: "tpl {rev}", coalesce: { key: "{repo}#{pr.number}" } },
    });
    await post("g1", { pr: { number: 3 }, rev: 1 });
    const cases: Array<[string, unknown, string]> = [
      ["u1", { rev: "missing" }, "pr"],
      ["u2", { pr: { number: null }, rev: "null" }, "pr"],
      ["u3", { pr: { number: "" }, rev: "empty" }, "pr"],
      ["u4", { pr: { number: 3 }, rev: "half" }, "tpl"],
    ];
    for (const [id, body, route] of cases) {
      expect(await post(id, body, route)).toMatchObject({
        status: 202,
        body: { status: "accepted", route, delivery_id: id },
      });
    }
    expect((await waitForRun(gw, "u1")).prompt).toBe("PR {pr.number} rev missing");
    expect((await waitForRun(gw, "u4")).prompt).toBe("tpl half");
    await waitForRun(gw, "u2");
    await waitForRun(gw, "u3");
    expect(dispatched()).toEqual([]);
    gw.clock.advance(30_000);
    expect(dispatched()).toEqual([{ id: "g1", superseded: 0, reason: "quiet_window" }]);
  });

  it("idempotency runs first: a repeated delivery is 200 duplicate and is not counted as superseded", async () => {
    gw = await start(prRoute());
    await post("d1", { pr: { number: 4 }, rev: 1 });
    await post("d2", { pr: { number: 4 }, rev: 2 });
    for (const id of ["d2", "d1", "d2"]) {
      expect(await post(id, { pr: { number: 4 }, rev: 99 })).toMatchObject({
        status: 200,
        body: { status: "duplicate" },
      });
    }
    gw.clock.advance(30_000);
    expect(dispatched()).toEqual([{ id: "d2", superseded: 1, reason: "quiet_window" }]);
    expect((await waitForRun(gw, "d2")).prompt).toBe(`${coalesceNote(1)}\n\nPR 4 rev 2`);
  });

  it("the run uses the latest event's payload, prompt and deliver_extra; no prompt → the latest payload's dump", async () => {
    const calls: Array<Record<string, unknown>> = [];
    const telegram = createServer(async (req: IncomingMessage, res) => {
      let text = "";
      for await (const chunk of req) text += chunk;
      if (req.url?.endsWith("/sendMessage")) calls.push(JSON.parse(text || "{}") as Record<string, unknown>);
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ ok: true, result: { message_id: calls.length } }));
    });
    servers.push(telegram);
    await new Promise<void>((resolve) => telegram.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(telegram.address() as AddressInfo).port}`;
    gw = await start(
      {
        chat: {
          secret: OPEN,
          prompt: "{who}: {__raw__}",
          deliver: "telegram",
          deliver_extra: { chat_id: "{chat}" },
          coalesce: { key: "thread" },
        },
        dump: { secret: OPEN, coalesce: { key: "thread" } },
      },
      { platforms: { telegram: { enabled: true, token: "1:t", base_url: base } } },
    );
    await post("c1", { thread: "t", who: "ann", chat: "101" }, "chat");
    await post("c2", { thread: "t", who: "bob", chat: "202" }, "chat");
    await post("r1", { thread: "t", v: 1 }, "dump");
    await post("r2", { thread: "t", v: 2 }, "dump");
    gw.clock.advance(30_000);
    const latest = { thread: "t", who: "bob", chat: "202" };
    expect((await waitForRun(gw, "c2")).prompt).toBe(
      `${coalesceNote(1)}\n\nbob: ${JSON.stringify(latest, null, 2)}`,
    );
    expect((await waitForRun(gw, "r2")).prompt).toBe(
      `${coalesceNote(1)}\n\n${JSON.stringify({ thread: "t", v: 2 }, null, 2)}`,
    );
    await expect.poll(() => calls.length, { timeout: 10_000 }).toBe(1);
    expect(calls[0]).toMatchObject({ chat_id: 202, text: "reply to c2" });
  });
});

describe("coalescing on dynamic subscriptions (spec 2.6, 4.3)", () => {
  it("a subscription's coalesce policy applies; a static route of the same name wins; a group outlives the route's removal", async () => {
    const coalescing = { secret: OPEN, prompt: "dyn {rev}", coalesce: { key: "pr.number" }, enabled: true };
    gw = await startTestGateway({
      fakeTimers: true,
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "webhook_subscriptions.json": JSON.stringify({ dyn: coalescing, same: coalescing }),
      },
      config: webhookConfig(
        { same: { secret: OPEN, prompt: "static {rev}" } },
        { rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
    expect((await post("y1", { pr: { number: 1 }, rev: 1 }, "dyn")).body).toEqual({ status: "coalesced" });
    expect((await post("y2", { pr: { number: 1 }, rev: 2 }, "dyn")).body).toEqual({ status: "coalesced" });
    expect(await post("s1", { pr: { number: 1 }, rev: 3 }, "same")).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "same" },
    });
    expect((await waitForRun(gw, "s1")).prompt).toBe("static 3");
    writeFileSync(
      join(gw.home.dir, "webhook_subscriptions.json"),
      JSON.stringify({ dyn: { ...coalescing, enabled: false } }),
    );
    expect((await post("y3", { pr: { number: 1 }, rev: 4 }, "dyn")).status).toBe(404);
    gw.clock.advance(30_000);
    expect((await waitForRun(gw, "y2")).prompt).toBe(`${coalesceNote(1)}\n\ndyn 2`);
  });
});

describe("a dispatched group always gets its run", () => {
  /** The gateway's run-queue cap for this test (default 100,000), so going past it stays quick. */
  const CAP = 1_000;

  it("groups firing together beyond the run queue's cap all run: none is dropped", {
    timeout: 120_000,
  }, async () => {
    gw = await startTestGateway({
      fakeTimers: true,
      runQueueCap: CAP,
      config: webhookConfig(
        { many: { secret: OPEN, prompt: "n{n}", coalesce: { key: "n" } } },
        { rate_limit: 1_000_000 },
        { agent: { provider: "echo", max_concurrent_runs: 1 } },
      ),
    });
    const total = CAP + 100;
    let next = 0;
    const answers: number[] = [];
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let n = next++; n < total; n = next++) answers.push((await post(`q${n}`, { n }, "many")).status);
      }),
    );
    expect(answers.filter((status) => status === 202)).toHaveLength(total);
    gw.clock.advance(30_000);
    const replies = () =>
      readFileSync(join(live().home.dir, "logs", "gateway.log"), "utf8").split("[webhook] many reply:")
        .length - 1;
    await vi.waitFor(() => expect(replies()).toBe(total), { timeout: 60_000, interval: 250 });
  });
});
