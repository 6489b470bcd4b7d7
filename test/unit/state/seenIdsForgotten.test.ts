import { describe, expect, it } from "vitest";
import { svcPaths } from "../../../src/config/paths.js";
import { createIdempotency } from "../../../src/gateway/idempotency.js";
import { createGatewayMetrics } from "../../../src/io/metrics/gatewayMetrics.js";
import { createSeenCache } from "../../../src/streams/seenCache.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { tempHome } from "../../helpers/home.js";

const HOUR = 3_600_000;

describe("delivery ids evicted at the idempotency cache's cap before their hour was up", () => {
  it("are counted, and only those: an id past its hour, or deleted, is not forgotten by the cap", () => {
    let t = 0;
    let calls = 0;
    const cache = createSeenCache({ ttlMs: HOUR, maxEntries: 3, now: () => t, onForgotten: () => calls++ });
    for (const id of ["a", "b", "c"]) cache.checkAndAdd(id);
    cache.delete("b");
    cache.checkAndAdd("d");
    expect([cache.forgotten(), calls]).toEqual([0, 0]);
    cache.checkAndAdd("e");
    expect([cache.forgotten(), calls]).toEqual([1, 1]);
    // "a" was forgotten within its hour: its retry is no duplicate.
    expect(cache.checkAndAdd("a")).toBe(false);
    expect(cache.forgotten()).toBe(2);
    t += HOUR;
    for (const id of ["x", "y", "z"]) cache.checkAndAdd(id);
    expect(cache.forgotten()).toBe(2);
  });

  it("are said in a WARN at most once a minute, with how many since the last, and counted in /metrics", async () => {
    const home = tempHome();
    try {
      const log = captureLogger();
      let t = 0;
      const idempotency = createIdempotency({
        paths: svcPaths(home.dir),
        logger: log.logger,
        clock: { now: () => t },
        maxEntries: 2,
      });
      const metrics = createGatewayMetrics({
        runs: () => ({ waiting: 0, active: 0 }),
        mcpStates: () => [],
        deliveryIdsForgotten: () => idempotency.seen.forgotten(),
      });
      const scraped = async () =>
        (await metrics.render()).text
          .split("\n")
          .filter((line) => line.startsWith("svc_webhook_delivery_ids_forgotten_total"));
      expect(await scraped()).toEqual(["svc_webhook_delivery_ids_forgotten_total 0"]);
      for (const id of ["r:1", "r:2", "r:3"]) idempotency.seen.checkAndAdd(id);
      t += 59_999;
      for (const id of ["r:4", "r:5"]) idempotency.seen.checkAndAdd(id);
      t += 1;
      idempotency.seen.checkAndAdd("r:6");
      const warned = log.lines().map((line) => JSON.parse(line) as { msg: string; forgotten: number });
      expect(warned.map((line) => line.forgotten)).toEqual([1, 3]);
      expect(warned[0]?.msg).toBe(
        "[webhook] 1 delivery id(s) forgotten before their hour was up: the idempotency cache holds the 2 latest (all routes together), and a sender's retry of a forgotten one runs again — said at most once a minute; svc_webhook_delivery_ids_forgotten_total counts them",
      );
      expect(await scraped()).toEqual(["svc_webhook_delivery_ids_forgotten_total 4"]);
    } finally {
      home.cleanup();
    }
  });
});
