import { describe, expect, it } from "vitest";
import { fromCallback, fromPromise } from "xstate";
import { startSystem } from "../../../src/actors/system.js";
import { silentLogger } from "../../../src/io/log.js";

/** A child that fails when it receives `boom`; counts how often it was started. */
function fragile(starts: { count: number }) {
  return fromCallback<{ type: "boom" }>(({ receive }) => {
    starts.count += 1;
    receive(() => {
      throw new Error("boom");
    });
  });
}

function capturingLogger() {
  const errors: Array<{ actor: unknown; msg: string }> = [];
  const logger = silentLogger();
  logger.error = ((obj: { actor?: unknown }, msg: string) =>
    void errors.push({ actor: obj.actor, msg })) as typeof logger.error;
  return { logger, errors };
}

describe("the root system supervises its children", () => {
  it("a child that fails is logged with its id and removed; the root and its other children go on", () => {
    const { logger, errors } = capturingLogger();
    const system = startSystem({ logger });
    const starts = { count: 0 };
    system.spawn("fragile", fragile(starts));
    system.spawn("steady", fragile({ count: 0 }));
    system.get("fragile")?.send({ type: "boom" });
    expect(errors).toEqual([{ actor: "fragile", msg: "[system] actor failed and was stopped" }]);
    expect(system.get("fragile")).toBeUndefined();
    expect(system.get("steady")).toBeDefined();
    expect(system.root.getSnapshot().status).toBe("active");
    expect(starts.count).toBe(1);
    system.shutdown();
  });

  it("with a restart policy a failed child is started again under the same id, at most `max` times", () => {
    const { logger, errors } = capturingLogger();
    const system = startSystem({ logger });
    const starts = { count: 0 };
    system.spawn("cron", fragile(starts), undefined, { restart: "on-error", max: 2 });
    system.get("cron")?.send({ type: "boom" });
    expect(starts.count).toBe(2);
    expect(system.get("cron")).toBeDefined();
    system.get("cron")?.send({ type: "boom" });
    expect(starts.count).toBe(3);
    system.get("cron")?.send({ type: "boom" });
    expect(starts.count).toBe(3);
    expect(system.get("cron")).toBeUndefined();
    expect(errors.map((e) => e.msg)).toEqual([
      "[system] actor failed and was restarted",
      "[system] actor failed and was restarted",
      "[system] actor failed and was stopped",
    ]);
    system.shutdown();
  });

  it("a child that finishes (a login) is removed, so its id can be used again", async () => {
    const system = startSystem({ logger: silentLogger() });
    const ref = system.spawn(
      "login",
      fromPromise(async () => "ok"),
    );
    await new Promise<void>((resolve) => ref.subscribe({ complete: () => resolve() }));
    expect(system.get("login")).toBeUndefined();
    expect(() =>
      system.spawn(
        "login",
        fromPromise(async () => "again"),
      ),
    ).not.toThrow();
    system.shutdown();
  });
});
