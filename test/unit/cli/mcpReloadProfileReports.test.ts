import { afterEach, describe, expect, it, vi } from "vitest";
import {
  liveProfileHubs,
  printProfileReloads,
  profileReports,
  refusalSince,
  refusedSince,
} from "../../../src/cli/mcp/profileReloads.js";
import { DEFAULT_PROFILE, svcPaths } from "../../../src/config/paths.js";
import { readStatusFile, type StatusFile, writeStatusFile } from "../../../src/io/mcp/statusFile.js";
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

/** Profile work's status file (or the default profile's) as the gateway writes it. */
function write(dir: string, file: Partial<StatusFile>, profile = "work"): void {
  writeStatusFile(svcPaths(dir, profile).mcpCache, { pid: 7, updatedAt: at(0), servers: [], ...file });
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

/**
 * A later SIGHUP refused while the command's reload is still running (stopping a slow server), before that
 * reload has reported: the refusal lands first, stamped with the reload under way (`underway`, its begin).
 */
describe("svc mcp reload's reading of a refusal that lands before its reload's report", () => {
  const early = { at: at(3), why: "profiles/work/.env: is empty", underway: at(1) };

  it("a named profile's: not the command's while the wait has time left, a later reload's once the report (begun before it) comes", () => {
    const dir = fresh();
    const reports = profileReports(dir, SENT);
    write(dir, { lastRefusedReload: early });
    expect(reports.look("work")).toEqual({});
    write(dir, { lastReload: { ...applied, at: at(1) }, lastRefusedReload: early });
    const seen = reports.look("work");
    expect(seen.refused).toBeUndefined();
    expect(seen.report?.reload.at).toBe(at(1));
    expect(seen.refusedLater).toBe("profiles/work/.env: is empty");
  });

  it("a named profile's with no report by the end of the wait is a later reload's, the command's reload not reported in time", () => {
    const dir = fresh();
    const reports = profileReports(dir, SENT);
    write(dir, { lastRefusedReload: early });
    expect(reports.look("work")).toEqual({});
    expect(reports.look("work", true)).toEqual({ refusedLater: "profiles/work/.env: is empty" });
  });

  it("a named profile's with no report by the end of the wait, no reload under way as it came, is the command's", () => {
    const dir = fresh();
    const reports = profileReports(dir, SENT);
    write(dir, { lastRefusedReload: { at: at(3), why: "profiles/work/.env: is empty" } });
    expect(reports.look("work", true)).toEqual({ refused: "profiles/work/.env: is empty" });
    // Latched: a report coming after that changes nothing.
    write(dir, { lastReload: { ...applied, at: at(1) }, lastRefusedReload: early });
    expect(reports.look("work")).toEqual({ refused: "profiles/work/.env: is empty" });
  });

  it("the default profile's: pending with no report while the wait has time left, a later reload's once the report comes or at the end of the wait", () => {
    const dir = fresh();
    const cache = svcPaths(dir, DEFAULT_PROFILE).mcpCache;
    const refusal = { ...early, why: "config.yaml: line 3: bad" };
    write(dir, { lastRefusedReload: refusal }, DEFAULT_PROFILE);
    const refused = refusedSince(readStatusFile(cache), SENT);
    expect(refusalSince(refused, undefined, false)).toEqual({ pending: "config.yaml: line 3: bad" });
    // The wait over with no report: the command's reload was still running as the later one was refused.
    expect(refusalSince(refused, undefined, true)).toEqual({
      refusedLaterUnreported: "config.yaml: line 3: bad",
    });
    write(dir, { lastReload: { ...applied, at: at(1) }, lastRefusedReload: refusal }, DEFAULT_PROFILE);
    const status = readStatusFile(cache);
    expect(refusalSince(refusedSince(status, SENT), Date.parse(status?.lastReload?.at ?? ""), false)).toEqual(
      {
        refusedLater: "config.yaml: line 3: bad",
      },
    );
    // A report begun after the refusal answered a later signal: the refusal gives way to it.
    write(dir, { lastReload: { ...applied, at: at(4) }, lastRefusedReload: refusal }, DEFAULT_PROFILE);
    expect(refusalSince(refusedSince(readStatusFile(cache), SENT), Date.parse(at(4)), false)).toBeUndefined();
    // No reload under way as it was refused: the command's at once, as before.
    write(dir, { lastRefusedReload: { at: at(1), why: "config.yaml: line 3: bad" } }, DEFAULT_PROFILE);
    expect(refusalSince(refusedSince(readStatusFile(cache), SENT), undefined, false)).toEqual({
      refused: "config.yaml: line 3: bad",
    });
  });
});

/**
 * A named profile that has not reported the reload by the end of the command's wait: its reload is not confirmed,
 * and the command exits 1, as it does when the default profile has not reported (docs/mcp.md, svc mcp reload).
 */
describe("svc mcp reload's exit for a named profile that has not reported its reload", () => {
  afterEach(() => {
    vi.restoreAllMocks();
    process.exitCode = undefined;
  });

  /** What printProfileReloads prints for profile work, its wait over, and the exit code it leaves. */
  async function printed(dir: string): Promise<{ out: string; exitCode: typeof process.exitCode }> {
    let out = "";
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      out += String(chunk);
      return true;
    });
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      out += String(chunk);
      return true;
    });
    process.exitCode = undefined;
    await printProfileReloads(
      ["work"],
      profileReports(dir, SENT),
      2,
      () => false,
      () => false,
    );
    const exitCode = process.exitCode;
    vi.restoreAllMocks();
    return { out, exitCode };
  }

  it("exits 1 with a later reload refused while the command's was still running", async () => {
    const dir = fresh();
    write(dir, { lastRefusedReload: { at: at(3), why: "profiles/work/.env: is empty", underway: at(1) } });
    const { out, exitCode } = await printed(dir);
    expect(out).toBe(
      "Profile work: has not reported its reload yet — see the gateway log\n" +
        "  a later reload was refused for this profile while this one was still running: profiles/work/.env: is empty\n",
    );
    expect(exitCode).toBe(1);
  });

  it("exits 1 with no refusal either", async () => {
    const dir = fresh();
    write(dir, {});
    const { out, exitCode } = await printed(dir);
    expect(out).toBe("Profile work: has not reported its reload yet — see the gateway log\n");
    expect(exitCode).toBe(1);
  });
});

/**
 * Which named profiles `svc mcp reload` waits for (docs/mcp.md, Named profiles): a profile whose connections the
 * gateway is closing (its route removed by an earlier reload, a server slow to stop still listed, stopped) is
 * reloaded no more and reports nothing, and was waited for: "has not reported its reload yet", exit 1.
 */
describe("svc mcp reload's named profiles to wait for", () => {
  const server = (state: "connected" | "stopped") => ({
    name: "slow",
    transport: "stdio" as const,
    state,
    toolCount: 1,
    lazy: false,
    cached: true,
    collisions: [],
  });

  it("leaves out a profile whose connections are being closed, and one of another gateway or with none", () => {
    const dir = fresh();
    write(dir, { servers: [server("stopped")], closing: at(-1) }, "work");
    write(dir, { servers: [server("connected")] }, "live");
    write(dir, { servers: [server("stopped")] }, "slowing");
    write(dir, { servers: [server("connected")], pid: 8 }, "other");
    write(dir, { servers: [], lastReload: { ...applied, at: at(-1), closed: true } }, "closed");
    expect(liveProfileHubs(dir, 7).sort()).toEqual(["live", "slowing"]);
  });
});
