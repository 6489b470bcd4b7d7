import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import type { Gateway } from "../../../src/gateway/index.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { appendAgent } from "../../helpers/appendAgent.js";
import { type FakeClock, fakeClock, startGatewayInHome, webhookConfig } from "../../helpers/gateway.js";
import { killedWithGroupPending } from "../../helpers/groupPending.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { liveOnDisk } from "./killHelpers.js";

/**
 * docs/coalescing-and-cron.md: a saved coalescing group held at start (its route gone) is reopened by its
 * route's first event once the route is back. When the route came back without `coalesce` (a plain agent
 * route, `deliver_only`, `cron_job`), the group runs at once, as the agent run its events were accepted
 * for, queued ahead of that event's run — never after it, at a later start.
 */

const OPEN = "INSECURE_NO_AUTH";
const homes: TempHome[] = [];
const running: Gateway[] = [];
afterEach(async () => {
  for (const gateway of running.splice(0)) await gateway.stop();
  for (const home of homes.splice(0)) home.cleanup();
});

/** A Telegram API for the `deliver_only` route (which needs a real target). */
let telegram: FakeApi;
beforeAll(async () => {
  telegram = await startFakeApi(async (request) =>
    request.path.endsWith("/getMe")
      ? { json: { ok: true, result: { id: 42, is_bot: true } } }
      : { json: { ok: true, result: { message_id: 1, chat: { id: 42 } } } },
  );
});
afterAll(() => telegram.close());

/** One run slot: runs.log lists the runs in the order the queue gave them. */
const configWith = (routes: Record<string, unknown>) =>
  stringify(
    webhookConfig(
      routes,
      { rate_limit: 1000 },
      {
        agent: appendAgent(1),
        platforms: { telegram: { enabled: true, token: "1:T", base_url: telegram.url } },
      },
    ),
  );

async function start(home: TempHome, clock: FakeClock): Promise<Gateway> {
  const gateway = await startGatewayInHome(home, 5000, clock.now, clock);
  running.push(gateway);
  return gateway;
}

async function stop(gateway: Gateway): Promise<void> {
  running.splice(running.indexOf(gateway), 1);
  await gateway.stop();
}

function ranInOrder(home: TempHome): string[] {
  try {
    return readFileSync(join(home.dir, "runs.log"), "utf8")
      .split("\n")
      .filter((id) => id !== "");
  } catch {
    return [];
  }
}

type LogLine = { msg: string; delivery_id?: string; reason?: string; superseded?: number };
const logOf = (home: TempHome): LogLine[] =>
  readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as LogLine);

/**
 * Held at start (the config has no route `grouped`), then route `grouped` comes back by a reload as
 * `route`, and one event is posted to it: returns the gateway and the event's answer.
 */
async function heldThenBackAs(home: TempHome, clock: FakeClock, route: Record<string, unknown>) {
  await killedWithGroupPending(home, clock.now());
  const gateway = await start(home, clock);
  expect(logOf(home).map((line) => line.msg)).toContainEqual(
    expect.stringContaining("1 pending coalescing group(s) not resumed"),
  );
  // The reload by itself runs nothing: the group waits for its route's first event.
  home.write("config.yaml", configWith({ grouped: route }));
  gateway.reload();
  clock.advance(60_000);
  expect(ranInOrder(home)).toEqual([]);
  const answer = await postJson(
    `http://127.0.0.1:${gateway.port}/webhooks/grouped`,
    { n: 1 },
    { "X-Request-ID": "newer" },
  );
  return { gateway, answer };
}

function newHome(): TempHome {
  const home = tempHome();
  homes.push(home);
  home.write("config.yaml", configWith({ other: { secret: OPEN } }));
  return home;
}

describe("a coalescing group held at start whose route comes back without coalesce", {
  timeout: 30_000,
}, () => {
  it("plain agent route: the group runs first (flushed, its two events counted), then the newer event; the next start runs nothing again", async () => {
    const clock = fakeClock();
    const home = newHome();
    const { gateway, answer } = await heldThenBackAs(home, clock, { secret: OPEN });
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ status: "accepted", delivery_id: "newer" });
    await vi.waitFor(() => expect(ranInOrder(home)).toEqual(["saved", "newer"]), {
      timeout: 10_000,
      interval: 20,
    });
    expect(logOf(home).filter((line) => line.msg.endsWith("coalesced group dispatched"))).toEqual([
      expect.objectContaining({ delivery_id: "saved", reason: "flush", superseded: 1 }),
    ]);
    expect(logOf(home).map((line) => line.msg)).toContain(
      "[state] grouped: 1 coalescing group(s) held since the start (the route was gone) run now, ahead of the route's first event since — the route no longer coalesces; each runs as the agent run its events were accepted for",
    );
    await stop(gateway);
    expect(liveOnDisk(home).groups.size).toBe(0);
    // The group ended with its run: a later start does not run the older event after the newer one.
    await start(home, clock);
    clock.advance(3_600_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(ranInOrder(home)).toEqual(["saved", "newer"]);
  });

  it("deliver_only route: the group runs as the agent run it was, once, and the event is delivered directly", async () => {
    const clock = fakeClock();
    const home = newHome();
    const { gateway, answer } = await heldThenBackAs(home, clock, {
      secret: OPEN,
      deliver_only: true,
      deliver: "telegram",
      deliver_extra: { chat_id: "42" },
      prompt: "direct {n}",
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: "delivered" });
    const sent = telegram.requests.filter((r) => r.path.endsWith("/sendMessage"));
    expect(sent.map((r) => (r.json as { text?: string }).text)).toContain("direct 1");
    await vi.waitFor(() => expect(ranInOrder(home)).toEqual(["saved"]), { timeout: 10_000, interval: 20 });
    expect(logOf(home).filter((line) => line.msg.endsWith("coalesced group dispatched"))).toEqual([
      expect.objectContaining({ delivery_id: "saved", reason: "flush" }),
    ]);
    await stop(gateway);
    expect(liveOnDisk(home).groups.size).toBe(0);
  });

  it("cron_job route: the group runs as the agent run it was (not as a fire of the job), whatever the event does", async () => {
    const clock = fakeClock();
    const home = newHome();
    // No such job: the event itself is dropped (202, as the route documents), the group still runs.
    const { gateway, answer } = await heldThenBackAs(home, clock, { secret: OPEN, cron_job: "nightly" });
    expect(answer.status).toBe(202);
    await vi.waitFor(() => expect(ranInOrder(home)).toEqual(["saved"]), { timeout: 10_000, interval: 20 });
    await stop(gateway);
    expect(liveOnDisk(home).groups.size).toBe(0);
  });
});
