import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { svcPaths } from "../../../src/config/paths.js";
import { createIdempotency } from "../../../src/gateway/idempotency.js";
import type { AcceptedEvent } from "../../../src/streams/context.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { tempHome } from "../../helpers/home.js";

const event = (deliveryId: string): AcceptedEvent => ({
  routeName: "notify",
  route: {} as AcceptedEvent["route"],
  profile: "default",
  event: "push",
  deliveryId,
  payload: {},
  headers: {},
  prompt: "p",
  extra: {},
  receivedAt: 0,
});

describe("webhook-seen-ids.json written while a direct delivery is under way (a stop's first save)", () => {
  it("leaves its id out until it ends: a kill before then must not make the sender's retry a duplicate of a delivery never made", async () => {
    const home = tempHome();
    try {
      const paths = svcPaths(home.dir);
      const idempotency = createIdempotency({
        paths,
        logger: captureLogger().logger,
        clock: { now: () => 0 },
        journal: { dir: join(home.dir, "state"), replayedIds: 0 },
      });
      const savedKeys = () =>
        existsSync(paths.seenIds)
          ? (JSON.parse(readFileSync(paths.seenIds, "utf8")) as { ids: Array<[string, number]> }).ids.map(
              ([key]) => key,
            )
          : [];
      idempotency.seen.checkAndAdd("notify:done-before");
      idempotency.seen.checkAndAdd("notify:under-way");
      let finish: (ok: boolean) => void = () => {};
      const deliver = idempotency.underway(
        () =>
          new Promise<boolean>((resolve) => {
            finish = resolve;
          }),
      );
      const delivering = deliver(event("under-way"));
      idempotency.save();
      expect(savedKeys()).toEqual(["notify:done-before"]);
      finish(true);
      await expect(delivering).resolves.toBe(true);
      idempotency.save();
      expect(savedKeys()).toEqual(["notify:done-before", "notify:under-way"]);
    } finally {
      home.cleanup();
    }
  });
});
