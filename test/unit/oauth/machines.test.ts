import { describe, expect, it } from "vitest";
import { createActor, fromPromise, SimulatedClock, waitFor } from "xstate";
import {
  type DeviceCode,
  type DeviceLoginInput,
  deviceLoginMachine,
  type PollResult,
} from "../../../src/machines/deviceLogin.js";
import {
  type ExchangeInput,
  oauthLoginMachine,
  type PreparedLogin,
  type PrepareInput,
} from "../../../src/machines/oauthLogin.js";

const FIVE_MIN = 5 * 60_000;

function browser(usesDocument: boolean, exchange: () => Promise<unknown> = async () => "tokens") {
  let prepares = 0;
  const never = new Promise<never>(() => {});
  const logic = oauthLoginMachine.provide({
    actors: {
      prepare: fromPromise<PreparedLogin, PrepareInput>(async () => {
        prepares++;
        return { authorizationUrl: "https://as.test/authorize", usesDocument, handle: null };
      }),
      awaitRedirect: fromPromise<unknown, PreparedLogin>(() => never),
      exchange: fromPromise<unknown, ExchangeInput>(exchange),
    },
  });
  return { logic, prepares: () => prepares };
}

describe("oauthLogin machine", () => {
  it("times out after exactly five minutes waiting for the redirect; the message points to cimd: false when a document is used", async () => {
    const clock = new SimulatedClock();
    const { logic } = browser(true);
    const actor = createActor(logic, {
      input: { serverName: "srv", job: null, timeoutMs: FIVE_MIN },
      clock,
    }).start();
    await waitFor(actor, (s) => s.matches("awaitingRedirect"));
    clock.increment(FIVE_MIN - 1);
    expect(actor.getSnapshot().matches("awaitingRedirect")).toBe(true);
    clock.increment(1);
    const out = actor.getSnapshot().output;
    expect(out?.ok).toBe(false);
    expect(out && !out.ok && out.error.message).toMatch(/timed out after 5 minutes.*cimd: false/);
  });

  it("without a document the timeout message just asks to log in again", async () => {
    const clock = new SimulatedClock();
    const actor = createActor(browser(false).logic, {
      input: { serverName: "srv", job: null, timeoutMs: FIVE_MIN },
      clock,
    }).start();
    await waitFor(actor, (s) => s.matches("awaitingRedirect"));
    clock.increment(FIVE_MIN);
    const out = actor.getSnapshot().output;
    expect(out && !out.ok && out.error.message).not.toMatch(/cimd/);
  });

  it("after the document is rejected at the token endpoint it prepares once more (registration), then gives up", async () => {
    const rejected = Object.assign(new Error("invalid_client"), { documentRejected: true });
    const logic = oauthLoginMachine.provide({
      actors: {
        prepare: fromPromise<PreparedLogin, PrepareInput>(async () => ({
          authorizationUrl: "u",
          usesDocument: true,
          handle: null,
        })),
        awaitRedirect: fromPromise<unknown, PreparedLogin>(async () => "code"),
        exchange: fromPromise<unknown, ExchangeInput>(async () => {
          throw rejected;
        }),
      },
    });
    const seen: string[] = [];
    const actor = createActor(logic, { input: { serverName: "srv", job: null, timeoutMs: FIVE_MIN } });
    actor.subscribe((s) => seen.push(String(s.value)));
    actor.start();
    await waitFor(actor, (s) => s.status === "done");
    expect(seen.filter((v) => v === "preparing")).toHaveLength(2);
    expect(actor.getSnapshot().output?.ok).toBe(false);
  });
});

function device(results: PollResult[], code: Partial<DeviceCode> = {}) {
  const polledAt: number[] = [];
  let clock: SimulatedClock;
  const logic = deviceLoginMachine.provide({
    actors: {
      requestCode: fromPromise(async () => ({
        userCode: "ABCD",
        verificationUri: "https://as.test/device",
        interval: 5,
        expiresIn: 600,
        handle: null,
        ...code,
      })),
      poll: fromPromise(async () => {
        polledAt.push(clock.now());
        return results.shift() ?? { kind: "pending" };
      }),
      save: fromPromise<unknown, { device: DeviceCode; tokens: unknown; input: DeviceLoginInput }>(
        async () => "saved",
      ),
    },
  });
  return {
    start(timeoutMs = 300_000) {
      clock = new SimulatedClock();
      const actor = createActor(logic, { input: { serverName: "srv", job: null, timeoutMs }, clock }).start();
      return { actor, clock, polledAt };
    },
  };
}

async function settle() {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe("deviceLogin machine (RFC 8628)", () => {
  it("polls at the server's interval, adds 5 s on slow_down, and saves on tokens", async () => {
    const { actor, clock, polledAt } = device([
      { kind: "pending" },
      { kind: "slow_down" },
      { kind: "pending" },
      { kind: "tokens", tokens: {} },
    ]).start();
    await waitFor(actor, (s) => s.matches({ authorizing: "waiting" }));
    for (const step of [5000, 5000, 10_000, 10_000]) {
      clock.increment(step - 1);
      await settle();
      clock.increment(1);
      await settle();
    }
    await waitFor(actor, (s) => s.status === "done");
    expect(polledAt).toEqual([5000, 10_000, 20_000, 30_000]);
    expect(actor.getSnapshot().output).toEqual({ ok: true, result: "saved" });
  });

  it("stops on access_denied", async () => {
    const { actor, clock } = device([
      { kind: "denied", message: "srv: the device login was denied" },
    ]).start();
    await waitFor(actor, (s) => s.matches({ authorizing: "waiting" }));
    clock.increment(5000);
    await waitFor(actor, (s) => s.status === "done");
    const out = actor.getSnapshot().output;
    expect(out && !out.ok && out.error.message).toMatch(/denied/);
  });

  it("is bounded by oauth.timeout", async () => {
    const { actor, clock } = device([]).start(12_000);
    await waitFor(actor, (s) => s.matches({ authorizing: "waiting" }));
    clock.increment(10_000);
    await settle();
    expect(actor.getSnapshot().status).toBe("active");
    clock.increment(2000);
    const out = actor.getSnapshot().output;
    expect(out && !out.ok && out.error.message).toMatch(/no approval within 12 s \(oauth.timeout\)/);
  });

  it("is bounded by the code lifetime when shorter than oauth.timeout", async () => {
    const { actor, clock } = device([], { expiresIn: 7 }).start(300_000);
    await waitFor(actor, (s) => s.matches({ authorizing: "waiting" }));
    clock.increment(7000);
    const out = actor.getSnapshot().output;
    expect(out && !out.ok && out.error.message).toMatch(/device code expired/);
  });
});
