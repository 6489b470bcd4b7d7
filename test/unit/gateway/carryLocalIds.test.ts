import { describe, expect, it } from "vitest";
import { localIdsToCarry } from "../../../src/gateway/carryLocalIds.js";
import type { CarriedId } from "../../../src/io/state/redis/carriedIds.js";

const HOUR = 60 * 60 * 1000;
const NOW = 10 * HOUR;

describe("the delivery ids a redis start carries over from the local backend", () => {
  it("takes the file's and the journal's, once each, for what is left of the later hour; a direct delivery as the journal says", () => {
    expect(
      localIdsToCarry(
        [
          ["pr:file-only", NOW + 1000],
          ["pr:both", NOW + 2000],
          ["notify:d1", NOW + 3000],
          ["pr:expired", NOW],
          // A clock set back since the stop: never more than the hour.
          ["pr:far", NOW + 5 * HOUR],
        ],
        [
          ["pr:both", NOW - HOUR + 4000, false],
          ["notify:d1", NOW - HOUR + 2000, true],
          ["notify:journal-only", NOW - HOUR + 500, true],
          ["pr:gone", NOW - HOUR, false],
        ],
        NOW,
      ),
    ).toEqual<CarriedId[]>([
      { key: "pr:file-only", leftMs: 1000, delivered: false },
      { key: "pr:both", leftMs: 4000, delivered: false },
      { key: "notify:d1", leftMs: 3000, delivered: true },
      { key: "pr:far", leftMs: HOUR, delivered: false },
      { key: "notify:journal-only", leftMs: 500, delivered: true },
    ]);
  });
});
