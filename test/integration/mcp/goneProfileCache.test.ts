import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stdioEntry, useHubs } from "./harness.js";

/**
 * The schema cache of a profile whose directory is gone (removed while the gateway runs, then a reload
 * reconnects its servers; or a profile named only by `svc mcp test --profile <typo>`) is not written: the
 * write made the directory again, which only a run of the profile is to do.
 */
const hubs = useHubs();

describe("the schema cache of a profile whose directory is gone", () => {
  it("is not written, so the directory stays gone; where it exists the cache is written", async () => {
    const gone = join(hubs.home.dir, "profiles", "work");
    const goneHub = hubs.hub(hubs.home, { fx: stdioEntry() }, { cacheDir: join(gone, "mcp-cache") });
    expect((await goneHub.settled("fx")).state).toBe("connected");
    expect(existsSync(gone)).toBe(false);
    const kept = join(hubs.home.dir, "mcp-cache");
    const keptHub = hubs.hub(hubs.home, { fx: stdioEntry() }, { cacheDir: kept });
    expect((await keptHub.settled("fx")).state).toBe("connected");
    expect(readdirSync(kept).filter((name) => name.endsWith(".json")).length).toBeGreaterThan(0);
  });
});
