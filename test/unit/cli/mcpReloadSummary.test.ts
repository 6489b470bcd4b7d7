import { describe, expect, it } from "vitest";
import { endedByStop, outcomesSince, stillConnecting } from "../../../src/cli/mcp/profileReloads.js";
import { endedByLater, reloadSummaryText } from "../../../src/cli/mcp/reloadSummary.js";
import type { ServerStatus } from "../../../src/io/mcp/statusFile.js";

const status = (name: string, state: ServerStatus["state"]): ServerStatus => ({
  name,
  transport: "stdio",
  state,
  toolCount: 1,
  lazy: state === "lazy",
  cached: true,
  collisions: [],
});

/** svc mcp reload said "reconnected (changed)" of a server that restarted lazy and had not connected. */
describe("svc mcp reload's summary", () => {
  it("lists a changed server that restarted lazy apart from those reconnected", () => {
    const text = reloadSummaryText(
      7,
      { added: [], removed: [], changed: ["a", "lz"], disabled: [], unchanged: ["u"] },
      [status("a", "connected"), status("lz", "lazy"), status("u", "connected")],
    );
    expect(text).toBe(
      "Gateway (pid 7) reloaded mcp_servers:\n  reconnected (changed): a\n  changed, lazy (connects at its first call): lz\n  unchanged: u\n",
    );
  });

  it("shows a server name's control characters escaped, in quotes, in every list (never raw: an OSC title, a line break)", () => {
    const osc = "e\u001b]0;pwned\u0007Z";
    const broken = 'q"b\\c\nd';
    const text = reloadSummaryText(
      7,
      { added: [osc], removed: [broken], changed: [], disabled: [], unchanged: [broken, "u"] },
      [status(osc, "connected"), status(broken, "connected"), status("u", "connected")],
    );
    expect(text).toBe(
      'Gateway (pid 7) reloaded mcp_servers:\n  added: "e\\u001b]0;pwned\\u0007Z"\n  removed: "q\\"b\\\\c\\nd"\n  unchanged: "q\\"b\\\\c\\nd", u\n',
    );
    const failed = reloadSummaryText(
      7,
      { added: [osc], removed: [], changed: [], disabled: [], unchanged: [] },
      [{ ...status(osc, "failed"), lastError: "spawn ENOENT" }],
    );
    expect(failed).not.toContain("\u001b");
    expect(failed).toContain('failed to connect: "e\\u001b]0;pwned\\u0007Z" (added)');
  });

  it("lists a changed lazy server the reload connected, never connected before, apart from those reconnected", () => {
    const text = reloadSummaryText(
      7,
      { added: [], removed: [], changed: ["a", "lz"], disabled: [], unchanged: [], started: ["lz"] },
      [status("a", "connected"), status("lz", "connected")],
    );
    expect(text).toBe(
      "Gateway (pid 7) reloaded mcp_servers:\n  reconnected (changed): a\n  changed, connected (was lazy, not connected before): lz\n",
    );
  });

  it("names a server whose (re)connect failed, with why, and one still connecting when the wait ended", () => {
    const text = reloadSummaryText(
      7,
      { added: ["n", "slow"], removed: [], changed: ["c"], disabled: [], enabled: ["e"], unchanged: [] },
      [
        { ...status("n", "failed"), lastError: "command not found: nope — check command (and PATH)" },
        status("slow", "connecting"),
        { ...status("c", "failed"), lastError: "connection refused" },
        status("e", "failed"),
      ],
    );
    expect(text).toBe(
      "Gateway (pid 7) reloaded mcp_servers:\n  added: slow (still connecting)\n" +
        "  failed to connect: n (added) — mcp_servers.n: command not found: nope — check command (and PATH)\n" +
        "  failed to connect: e (enabled)\n" +
        "  failed to connect: c (changed) — mcp_servers.c: connection refused\n",
    );
  });

  it("waits for a server whose connect a later reload ended (stopped), and lists it as not connected when that reload has not reported by the wait's end", () => {
    const reload = {
      added: ["bh7"],
      removed: [],
      changed: [],
      disabled: [],
      unchanged: [],
      outcomes: { bh7: { state: "connecting" as const } },
    };
    const servers = [status("bh7", "stopped")];
    expect(stillConnecting(reload, servers)).toBe(true);
    // Removed or changed by that reload: not known before its report.
    expect(endedByLater(reload, servers)).toEqual(["bh7"]);
    expect(reloadSummaryText(7, reload, servers)).toBe(
      "Gateway (pid 7) reloaded mcp_servers:\n  not connected: bh7 (added) — a later reload ended its connect before it connected (that reload had not reported when the wait ended)\n",
    );
    // The gateway's stop: not connected, for that reason.
    expect(endedByStop(reload, servers, true)).toEqual(["bh7"]);
    expect(endedByLater({ ...reload, endedByStop: ["bh7"] }, servers)).toEqual([]);
    // The later reload's report: it changed bh7's entry and connects it again.
    const later = { ...reload, added: [], changed: ["bh7"] };
    const read = outcomesSince(reload, later);
    expect(read.replacedLater).toEqual(["bh7"]);
    const again = [status("bh7", "connecting")];
    expect(stillConnecting(read, again)).toBe(true);
    expect(endedByLater(read, again)).toEqual([]);
    expect(reloadSummaryText(7, read, again)).toBe(
      "Gateway (pid 7) reloaded mcp_servers:\n  added: bh7 (still connecting: a later reload changed its entry before it connected, and connects it again)\n",
    );
  });

  it("lists a server whose connect a later reload ended as it removed the server as not connected, and waits no more", () => {
    const reload = {
      added: ["bh7"],
      removed: [],
      changed: [],
      disabled: [],
      unchanged: ["ok"],
      outcomes: { bh7: { state: "connecting" as const } },
    };
    // The later reload removed it: its report has no outcome for it, and its configuration no bh7.
    const later = { added: [], removed: ["bh7"], changed: [], disabled: [], unchanged: ["ok"], outcomes: {} };
    const read = outcomesSince(reload, later);
    expect(read.removedLater).toEqual(["bh7"]);
    expect(read.outcomes).toEqual({});
    const servers = [status("ok", "connected")];
    expect(stillConnecting(read, servers)).toBe(false);
    expect(reloadSummaryText(7, read, servers)).toBe(
      "Gateway (pid 7) reloaded mcp_servers:\n  not connected: bh7 (added) — a later reload removed it from mcp_servers before it connected\n  unchanged: ok\n",
    );
    expect(endedByStop(read, servers, true)).toEqual([]);
    // Read again beside a still later report (the command missed the one that removed it): kept so.
    const third = { ...later, removed: [], unchanged: ["ok"] };
    expect(outcomesSince(read, third).removedLater).toEqual(["bh7"]);
    expect(outcomesSince(reload, third).removedLater).toEqual(["bh7"]);
    // One the later reload still has, not waited for by it (it disabled it): judged by its state.
    expect(outcomesSince(reload, { ...later, removed: [], disabled: ["bh7"] }).removedLater).toBeUndefined();
  });

  it("lists an added server the reload started no connect for (enabled: false, lazy) as such when the gateway's stop made it stopped", () => {
    // The report as the gateway wrote it, and its servers once its stop began: every one stopped.
    const reload = {
      added: ["S", "D", "L"],
      removed: [],
      changed: [],
      disabled: [],
      unchanged: [],
      outcomes: {
        S: { state: "connecting" as const },
        D: { state: "skipped" as const },
        L: { state: "lazy" as const },
      },
    };
    const stopped = [status("S", "stopped"), status("D", "stopped"), status("L", "stopped")];
    expect(endedByStop(reload, stopped, true)).toEqual(["S"]);
    expect(reloadSummaryText(7, { ...reload, endedByStop: ["S"] }, stopped)).toBe(
      "Gateway (pid 7) reloaded mcp_servers:\n  added: D (enabled: false, not connected), L (lazy: connects at its first call)\n" +
        "  not connected: S (added) — the gateway began stopping before it connected\n",
    );
    // Once the stop is done the status file has no server left: still as the report says.
    expect(reloadSummaryText(7, { ...reload, endedByStop: ["S"] }, [])).toBe(
      "Gateway (pid 7) reloaded mcp_servers:\n  added: D (enabled: false, not connected), L (lazy: connects at its first call)\n" +
        "  not connected: S (added) — the gateway began stopping before it connected\n",
    );
    // Not waited for: only S's connect was under way.
    expect(
      stillConnecting(
        { ...reload, outcomes: { ...reload.outcomes, S: { state: "failed" as const } } },
        stopped,
      ),
    ).toBe(false);
    // A report naming no outcome for it: stopped is no connect under way either.
    const bare = { ...reload, outcomes: { S: { state: "connecting" as const } } };
    expect(endedByStop(bare, stopped, true)).toEqual(["S"]);
    expect(stillConnecting({ ...bare, outcomes: {} }, stopped)).toBe(false);
  });

  it("says of an added server that is disabled or lazy that it did not connect", () => {
    const text = reloadSummaryText(
      7,
      { added: ["new", "off", "lz"], removed: [], changed: [], disabled: [], unchanged: [] },
      [status("new", "connected"), status("off", "skipped"), status("lz", "lazy")],
    );
    expect(text).toBe(
      "Gateway (pid 7) reloaded mcp_servers:\n  added: new, off (enabled: false, not connected), lz (lazy: connects at its first call)\n",
    );
  });

  it("lists an unchanged server the reload tried again apart, with how the try ended", () => {
    const text = reloadSummaryText(
      7,
      {
        added: [],
        removed: [],
        changed: [],
        disabled: [],
        unchanged: ["u", "ok", "bad", "slow"],
        retried: ["ok", "bad", "slow"],
      },
      [
        status("u", "connected"),
        status("ok", "connected"),
        { ...status("bad", "failed"), lastError: "the login's token is refused" },
        status("slow", "reconnecting"),
      ],
    );
    expect(text).toBe(
      "Gateway (pid 7) reloaded mcp_servers:\n  retried (was not connected): ok, slow (still connecting)\n" +
        "  failed to connect: bad (retried) — mcp_servers.bad: the login's token is refused\n  unchanged: u\n",
    );
  });

  it("says nothing changed when nothing did", () => {
    expect(
      reloadSummaryText(7, { added: [], removed: [], changed: [], disabled: [], unchanged: ["u"] }, []),
    ).toBe("Gateway (pid 7) reloaded mcp_servers:\n  unchanged: u\n  nothing changed\n");
  });

  it("does not say nothing changed when the only change is a server enabled that did not connect", () => {
    const text = reloadSummaryText(
      7,
      {
        added: [],
        removed: [],
        changed: [],
        disabled: [],
        enabled: ["e", "s"],
        unchanged: ["u"],
        endedByStop: ["s"],
      },
      [status("e", "failed"), status("s", "stopped"), status("u", "connected")],
    );
    expect(text).toBe(
      "Gateway (pid 7) reloaded mcp_servers:\n  failed to connect: e (enabled)\n" +
        "  not connected: s (enabled) — the gateway began stopping before it connected\n  unchanged: u\n",
    );
  });

  it("lists a server changed from enabled: false as enabled, not reconnected (it never was connected)", () => {
    const text = reloadSummaryText(
      7,
      { added: [], removed: [], changed: ["a"], disabled: [], enabled: ["on", "lz"], unchanged: [] },
      [status("a", "connected"), status("on", "connected"), status("lz", "lazy")],
    );
    expect(text).toBe(
      "Gateway (pid 7) reloaded mcp_servers:\n  enabled (was enabled: false): on, lz (lazy: connects at its first call)\n  reconnected (changed): a\n",
    );
  });

  it("lists a changed server that stays enabled: false apart, neither reconnected nor stopped", () => {
    const text = reloadSummaryText(
      7,
      { added: [], removed: [], changed: ["a", "off"], disabled: ["gone"], unchanged: [] },
      [status("a", "connected"), status("off", "skipped"), status("gone", "skipped")],
    );
    expect(text).toBe(
      "Gateway (pid 7) reloaded mcp_servers:\n  reconnected (changed): a\n  changed, still enabled: false (not connected): off\n  stopped (disabled): gone\n",
    );
  });

  it("takes a stopped server of a report without outcomes (a gateway started before they were reported) for a connect the stop ended", () => {
    const reload = {
      added: ["x"],
      removed: [],
      changed: ["c"],
      disabled: [],
      enabled: [],
      unchanged: ["ok"],
      retried: [],
    };
    const stopped = [status("x", "stopped"), status("c", "stopped"), status("ok", "connected")];
    expect(stillConnecting(reload, stopped)).toBe(true);
    expect(endedByStop(reload, stopped, true)).toEqual(["x", "c"]);
    expect(reloadSummaryText(7, { ...reload, endedByStop: ["x", "c"] }, stopped)).toBe(
      "Gateway (pid 7) reloaded mcp_servers:\n" +
        "  not connected: x (added) — the gateway began stopping before it connected\n" +
        "  not connected: c (changed) — the gateway began stopping before it connected\n" +
        "  unchanged: ok\n",
    );
    // Not stopping: a later reload ended its connect, and has not reported whether it connects it again.
    expect(reloadSummaryText(7, reload, stopped)).toContain(
      "not connected: x (added) — a later reload ended its connect before it connected (that reload had not reported when the wait ended)",
    );
  });

  it("lists a server the gateway's stop ended before it connected as not connected, with why", () => {
    const text = reloadSummaryText(
      7,
      {
        added: ["n"],
        removed: [],
        changed: ["c", "ok"],
        disabled: [],
        enabled: ["e"],
        unchanged: ["r"],
        retried: ["r"],
        endedByStop: ["n", "c", "e", "r"],
      },
      [status("c", "stopped"), status("ok", "connected"), status("e", "connecting")],
    );
    expect(text).toBe(
      "Gateway (pid 7) reloaded mcp_servers:\n  reconnected (changed): ok\n" +
        "  not connected: n (added) — the gateway began stopping before it connected\n" +
        "  not connected: e (enabled) — the gateway began stopping before it connected\n" +
        "  not connected: c (changed) — the gateway began stopping before it connected\n" +
        "  not connected: r (retried) — the gateway began stopping before it connected\n",
    );
  });
});

/**
 * svc mcp reload took a server still connecting when the gateway began stopping, or one the stop had ended
 * (stopped, or gone from the status file), for reconnected.
 */
describe("the servers a reload started that the gateway's stop ended", () => {
  const reload = {
    added: ["a"],
    removed: ["gone"],
    changed: ["c", "done"],
    disabled: [],
    enabled: ["lz"],
    unchanged: ["u", "r"],
    retried: ["r"],
  };
  const servers = [
    status("a", "connecting"),
    status("c", "connecting"),
    status("done", "connected"),
    status("lz", "lazy"),
    status("u", "connecting"),
    status("r", "reconnecting"),
  ];

  it("are those still connecting once the stop began, of the servers it started or tried again", () => {
    expect(endedByStop(reload, servers, true)).toEqual(["a", "c", "r"]);
  });

  it("are none while the gateway is not stopping", () => {
    expect(endedByStop(reload, servers, false)).toEqual([]);
  });

  it("are those the gateway reports, whatever the status file still shows of them", () => {
    expect(endedByStop({ ...reload, endedByStop: ["c"] }, [status("done", "stopped")], false)).toEqual(["c"]);
    // The report is of its own servers only.
    expect(endedByStop({ ...reload, endedByStop: ["u"] }, [], true)).toEqual([]);
  });
});

/**
 * svc mcp reload waited out --wait and printed "(still connecting)" of a crash-looping server and a hung one
 * it retried: each was out of connecting a moment only, never both at one read of the status file. The
 * gateway's report gives how each connect it waited for first ended, and the command waits on that.
 */
describe("svc mcp reload with the outcomes of the connects a reload waited for", () => {
  const reload = {
    added: [],
    removed: [],
    changed: [],
    disabled: [],
    unchanged: ["loop", "hang3"],
    retried: ["loop", "hang3"],
  };
  const hang3Error = "connect timed out after 3 s (connect_timeout) — it wrote nothing on stderr";
  // loop crashed again after its connect; hang3 failed and its backoff retry is under way.
  const now = [
    {
      ...status("loop", "reconnecting"),
      lastError: "the connection closed: the server process exited (code 1)",
    },
    { ...status("hang3", "connecting"), lastError: hang3Error },
  ];
  const ended = {
    ...reload,
    outcomes: {
      loop: { state: "connected" as const },
      hang3: { state: "failed" as const, lastError: hang3Error },
    },
  };

  it("stops waiting once each has connected or failed, whatever each is by now", () => {
    expect(stillConnecting(reload, now)).toBe(true);
    expect(stillConnecting(ended, now)).toBe(false);
    expect(
      stillConnecting({ ...ended, outcomes: { ...ended.outcomes, loop: { state: "connecting" } } }, now),
    ).toBe(true);
  });

  it("prints each by how its connect first ended", () => {
    expect(reloadSummaryText(7, ended, now)).toBe(
      "Gateway (pid 7) reloaded mcp_servers:\n  retried (was not connected): loop\n" +
        `  failed to connect: hang3 (retried) — mcp_servers.hang3: ${hang3Error}\n`,
    );
    expect(endedByStop(ended, [status("loop", "stopped"), status("hang3", "stopped")], true)).toEqual([]);
  });

  it("takes a connect's outcome from a later reload's report that waits for it too", () => {
    const pending = {
      ...ended,
      outcomes: { loop: { state: "connecting" as const }, hang3: ended.outcomes.hang3 },
    };
    const later = { ...reload, retried: ["loop"], outcomes: { loop: { state: "connected" as const } } };
    expect(outcomesSince(pending, later).outcomes).toEqual(ended.outcomes);
    // One the later reload did not wait for is judged by its state.
    expect(outcomesSince(pending, { ...later, outcomes: {} }).outcomes).toEqual({
      hang3: ended.outcomes.hang3,
    });
    expect(outcomesSince(reload, later)).toBe(reload);
  });
});
