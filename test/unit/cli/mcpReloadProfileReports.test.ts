import { afterEach, describe, expect, it } from "vitest";
import { profileReports } from "../../../src/cli/mcp/profileReloads.js";
import { svcPaths } from "../../../src/config/paths.js";
import { type StatusFile, writeStatusFile } from "../../../src/io/mcp/statusFile.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());
/** A new SVC_HOME for the next case (the one before removed). */
const fresh = (): string => {
  home?.cleanup();
  home = tempHome();
  return home.dir;
};

const SENT = Date.parse("2026-12-07T10:00:00.000Z");
const at = (seconds: number) => new Date(SENT + seconds * 1000).toISOString();
const applied = {
  added: ["bh7"],
  removed: [],
  changed: [],
  disabled: [],
  unchanged: ["fx"],
  outcomes: { bh7: { state: "connecting" as const } },
};

/** Profile work's status file as the gateway writes it. */
function write(dir: string, file: Partial<StatusFile>): void {
  writeStatusFile(svcPaths(dir, "work").mcpCache, { pid: 7, updatedAt: at(0), servers: [], ...file });
}

/**
 * Which refusal of a named profile's reload is the command's (docs/mcp.md, svc mcp reload): the gateway
 * refused a later SIGHUP's (profiles/work/.env emptied) after the command's reload was applied and reported,
 * and the command said its own was refused.
 */
describe("svc mcp reload's reading of a named profile's refusals", () => {
  it("takes a refusal stamped after the profile's report for a later reload's, seen at the first look or after", () => {
    for (const firstLook of [true, false]) {
      const dir = fresh();
      const reports = profileReports(dir, SENT);
      write(dir, { lastReload: { ...applied, at: at(1) } });
      if (!firstLook) expect(reports.look("work").report?.reload.at).toBe(at(1));
      write(dir, {
        lastReload: { ...applied, at: at(1) },
        lastRefusedReload: { at: at(3), why: "profiles/work/.env: is empty" },
      });
      const seen = reports.look("work");
      expect(seen.refused).toBeUndefined();
      expect(seen.report?.reload.at).toBe(at(1));
      expect(seen.refusedLater).toBe("profiles/work/.env: is empty");
    }
  });

  it("takes a refusal with no report since the signal for the command's, and one a newer report follows for none", () => {
    let dir = fresh();
    const reports = profileReports(dir, SENT);
    write(dir, { lastRefusedReload: { at: at(1), why: "profiles/work/.env: is empty" } });
    expect(reports.look("work")).toEqual({ refused: "profiles/work/.env: is empty" });
    dir = fresh();
    const later = profileReports(dir, SENT);
    write(dir, {
      lastReload: { ...applied, at: at(2) },
      lastRefusedReload: { at: at(1), why: "profiles/work/.env: is empty" },
    });
    const seen = later.look("work");
    expect(seen.refused).toBeUndefined();
    expect(seen.refusedLater).toBeUndefined();
    expect(seen.report?.reload.at).toBe(at(2));
    // One from before the signal answered an earlier reload.
    dir = fresh();
    write(dir, { lastRefusedReload: { at: at(-1), why: "profiles/work/.env: is empty" } });
    expect(profileReports(dir, SENT).look("work")).toEqual({});
  });
});
