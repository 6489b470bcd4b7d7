import { describe, expect, it } from "vitest";
import { commandRunner } from "../../../src/actors/agent/command.js";

/**
 * A command agent's process group is noted with the run's name when the run is not journaled (a cron
 * job's run on its schedule or by `svc cron run`): a start after a SIGKILL stops it and says that run is
 * not run again, where a webhook run (or a cron run a webhook event fired) runs again.
 */
describe("the note of a command agent's process group", () => {
  const noted = async (route: string, event: string, profile?: string) => {
    const notes: (string | undefined)[] = [];
    const runner = commandRunner({
      argv: ["sh", "-c", "cat >/dev/null; echo done"],
      timeoutMs: 10_000,
      groups: {
        started: (_pid, name, named) => notes.push(named === undefined ? name : `${name} of ${named}`),
        toolStarted: () => undefined,
        ended: () => undefined,
      },
    });
    const request = { route, event, deliveryId: "d-notes-1", prompt: "p", toolsets: [], profile };
    await runner.run(request, new AbortController().signal);
    return notes;
  };

  it("names a cron job's scheduled or manual run", async () => {
    expect(await noted("cron:nightly-digest", "schedule")).toEqual(["cron:nightly-digest"]);
    expect(await noted("cron:nightly-digest", "manual")).toEqual(["cron:nightly-digest"]);
  });

  it("names the profile of a named profile's cron run, not the default one's", async () => {
    expect(await noted("cron:nightly-digest", "schedule", "work")).toEqual(["cron:nightly-digest of work"]);
    expect(await noted("cron:nightly-digest", "manual", "default")).toEqual(["cron:nightly-digest"]);
  });

  it("does not name a journaled run: a webhook run, or a cron run a webhook event fired", async () => {
    expect(await noted("github-review", "pull_request")).toEqual([undefined]);
    expect(await noted("cron:nightly-digest", "webhook:fire:d-notes-1")).toEqual([undefined]);
  });
});
