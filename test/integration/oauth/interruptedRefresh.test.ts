import { type ChildProcess, spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { makeJob } from "../../../src/actors/oauth/context.js";
import { usableTokens } from "../../../src/actors/oauth/refresh.js";
import { svcPaths } from "../../../src/config/paths.js";
import { silentLogger } from "../../../src/io/log.js";
import { type FakeAs, startFakeAs } from "../../fakes/authServer/fakeAs.js";
import { startProtectedMcp } from "../../fakes/authServer/mcpServer.js";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { harness, loginWith } from "./helpers.js";

/**
 * A refresh cut between its request and the save of its answer leaves the tokens file holding a refresh
 * token the authorization server has already rotated; with reuse detection, the next refresh (the
 * gateway's, another command's) revokes the whole grant. A signal arriving then waits for the save.
 */
/** What the test's onTestFinished is given: the tests of this file run at once, each with its own home and fakes. */
type Finished = (fn: () => Promise<void>) => void;

/** Resolves when `check` holds, polling the test's own fakes (no timing is asserted). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}

/**
 * A home of the test's own, logged in to a fake authorization server with an expired access token. When the
 * test finishes, `closers` run (last added first), then the home is removed.
 */
async function loggedInWithExpiredToken(finished: Finished): Promise<{
  as: FakeAs;
  url: string;
  release: () => void;
  entry: { url: string; auth: "oauth"; oauth: { cimd: boolean } };
  home: TempHome;
  closers: Array<() => Promise<void>>;
}> {
  const home = tempHome();
  const closers: Array<() => Promise<void>> = [];
  finished(async () => {
    while (closers.length) await closers.pop()?.();
    home.cleanup();
  });
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const as = await startFakeAs({ reuseRevokesFamily: true, refreshAnswered: () => gate });
  closers.push(as.close);
  const mcp = await startProtectedMcp(
    () => as.url,
    async (token) => as.active(token),
  );
  closers.push(mcp.close);
  const h = harness(home.dir, "notes", mcp.url, { cimd: false });
  const saved = await loginWith(h);
  home.write(
    "config.yaml",
    `mcp_servers:\n  notes:\n    url: ${mcp.url}\n    auth: oauth\n    oauth:\n      cimd: false\n`,
  );
  h.job.store.saveTokens({ ...saved, expires_at: saved.obtained_at as number });
  return {
    as,
    url: mcp.url,
    release,
    entry: { url: mcp.url, auth: "oauth" as const, oauth: { cimd: false } },
    home,
    closers,
  };
}

function start(
  home: TempHome,
  args: string[],
): { child: ChildProcess; ended: Promise<NodeJS.Signals | number | null> } {
  const child = spawn(process.execPath, [...SVC_ARGV, ...args], {
    env: { ...process.env, SVC_HOME: home.dir, BROWSER: "" },
    stdio: ["ignore", "ignore", "ignore"],
  });
  const ended = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.on("close", (code, signal) => resolve(signal ?? code)),
  );
  return { child, ended };
}

const refreshes = (as: FakeAs) => as.seen.filter((r) => r.body.get("grant_type") === "refresh_token");

// Each test starts an svc command that loads the OAuth and MCP modules before it refreshes: on a loaded
// machine one took longer than the default 30 s test timeout. The tests of both describes run at once
// (describe.concurrent): each mostly waits, on a signal's effect or on the gateway's stop.
describe.concurrent("Ctrl-C while a token refresh waits for its answer", { timeout: 60_000 }, () => {
  for (const command of [
    ["mcp", "tools", "notes"],
    ["mcp", "call", "notes", "whoami"],
  ]) {
    it(`svc ${command.join(" ")}: the new tokens are saved before the command ends by the signal; the grant still works`, async ({
      onTestFinished,
    }) => {
      const { as, release, entry, home } = await loggedInWithExpiredToken(onTestFinished);
      const { child, ended } = start(home, command);
      await until(() => refreshes(as).length === 1);
      child.kill("SIGINT");
      // The answer leaves once the command had the time to end (it has not, when it waits for the save).
      await Promise.race([ended, new Promise((r) => setTimeout(r, 500))]);
      release();
      expect(await ended).toBe("SIGINT");
      // The next refresh (a gateway's) sends the rotated token, not the used one: the grant lives on.
      const later = makeJob("notes", entry, {
        paths: svcPaths(home.dir),
        logger: silentLogger(),
        now: () => Date.now() + 2 * 3600_000,
      });
      const renewed = await usableTokens(later);
      expect(refreshes(as)).toHaveLength(2);
      expect(as.revokedFamilies).toBe(0);
      expect(as.active(renewed.access_token)).toBe(true);
    });
  }

  it("a second Ctrl-C ends the command at once, without waiting for the answer", async ({
    onTestFinished,
  }) => {
    const { as, release, home } = await loggedInWithExpiredToken(onTestFinished);
    const { child, ended } = start(home, ["mcp", "tools", "notes"]);
    await until(() => refreshes(as).length === 1);
    child.kill("SIGINT");
    await Promise.race([ended, new Promise((r) => setTimeout(r, 500))]);
    child.kill("SIGINT");
    expect(await ended).toBe("SIGINT");
    release();
  });
});

// A gateway start, its connect and refresh, and the stop (its wait for the connect under way, 7 s): on a
// loaded machine (a load average near 20) this took 25 to 33 s, past the default 30 s test timeout.
describe.concurrent("the gateway stopped while a reconnect's token refresh waits for its answer", {
  timeout: 90_000,
}, () => {
  it("saves the new tokens before it exits, however long past the wait for abandoned connects", async ({
    onTestFinished,
  }) => {
    const { as, release, entry, home, closers } = await loggedInWithExpiredToken(onTestFinished);
    const children: ChildProcess[] = [];
    closers.push(async () => {
      for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    });
    home.write(
      "config.yaml",
      `platforms:\n  webhook:\n    enabled: true\n    extra:\n      host: 127.0.0.1\nmcp_servers:\n  notes:\n    url: ${entry.url}\n    auth: oauth\n    oauth:\n      cimd: false\n`,
    );
    const gateway = await startCliGateway(home, children);
    await until(() => refreshes(as).length === 1);
    gateway.child.kill("SIGTERM");
    // Once the drain is over (past the wait for a connect still under way, seconds), the
    // exit's wait is said, with its bound: past the drain the gateway is not silent.
    await until(() =>
      gateway
        .output()
        .includes("[gateway] waiting for mcp_servers.notes's token refresh to be saved (at most 30 s)"),
    );
    // A second signal then speaks of that wait, not of runs getting the rest of the drain.
    gateway.child.kill("SIGTERM");
    await until(() =>
      gateway
        .output()
        .includes(
          "[gateway] SIGTERM received again: already stopping — the drain is over; waiting for mcp_servers.notes's token refresh to be saved (at most 30 s), then the gateway exits",
        ),
    );
    expect(gateway.output()).not.toContain("runs still in flight get the rest");
    expect(gateway.child.exitCode).toBeNull();
    release();
    expect(await gateway.exited).toBe(0);
    expect(gateway.output().trimEnd().split("\n").at(-1)).toMatch(/\[gateway\] stopped \(exit 0\)$/);
    const later = makeJob("notes", entry, {
      paths: svcPaths(home.dir),
      logger: silentLogger(),
      now: () => Date.now() + 2 * 3600_000,
    });
    await usableTokens(later);
    expect(refreshes(as)).toHaveLength(2);
    expect(as.revokedFamilies).toBe(0);
  });
});
