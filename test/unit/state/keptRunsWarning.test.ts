import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createCoalescer } from "../../../src/actors/coalescer.js";
import { pipelineLogHooks } from "../../../src/gateway/logHooks.js";
import { resumeSavedRuns } from "../../../src/gateway/resumeSavedRuns.js";
import { type PendingRun, writePendingRuns } from "../../../src/io/stores/pendingRuns.js";
import { GatewayState } from "../../../src/state/gatewayState.js";
import { memoryStateStore } from "../../../src/state/memoryStore.js";
import type { Recovered } from "../../../src/state/store.js";
import type { ResolvedRoute } from "../../../src/streams/context.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { tempHome } from "../../helpers/home.js";

const run = (routeName: string, deliveryId: string, profile = "default"): PendingRun => ({
  profile,
  routeName,
  event: "push",
  deliveryId,
  prompt: "p",
  extra: {},
  receivedAt: 1000,
});

describe("journaled runs whose route is gone", () => {
  it("are reported in one line per start with their count per route (a backlog of thousands was a line each), pending groups counted apart from runs", async () => {
    const home = tempHome();
    try {
      const runs = [
        ...Array.from({ length: 3000 }, (_, i) => run("gone", `g-${i}`)),
        run("x", "w-1", "work"),
      ];
      const recovered: Recovered = {
        runs,
        groups: [{ id: "gone\u00001", latest: run("gone", "grp"), merged: 2, firstAt: 1, lastAt: 2 }],
        seen: [],
        runKeys: [],
      };
      const log = captureLogger();
      const state = new GatewayState(
        { ...memoryStateStore(), recover: () => recovered },
        () => 5000,
        log.logger,
      );
      const queued: unknown[] = [];
      await state.resume({
        resumeRuns: (r) => queued.push(...r),
        coalescer: createCoalescer({ dispatch: () => {} }),
        lookup: () => undefined,
        pendingRunsFile: join(home.dir, "webhook-pending-runs.json"),
        onPendingUnreadable: () => {},
        onPendingEntriesKept: () => {},
        onKept: (kept, groups) =>
          pipelineLogHooks(log.logger).onRunsKept(
            kept,
            "the journal (/home/me/.svc/state)",
            undefined,
            groups,
          ),
      });
      expect(queued).toEqual([]);
      expect(log.messages()).toEqual([
        "[webhook] 3001 saved agent run(s) and 1 pending coalescing group(s) not resumed — their route no longer exists (runs — gone: 3000, work/x: 1; groups — gone: 1); they stay in the journal (/home/me/.svc/state) and run at the next start that finds their route (a reload that brings it back does not run them; a group takes in its route's first event after that)",
      ]);
    } finally {
      home.cleanup();
    }
  });

  it("a route of that name bound to another profile now is named: the run resumes only under its own profile", () => {
    const home = tempHome();
    try {
      const file = join(home.dir, "webhook-pending-runs.json");
      writePendingRuns(file, {
        runs: [run("billing-hook", "b-1", "work"), run("gone", "g-1")],
        unreadable: [],
      });
      const log = captureLogger();
      const queued: unknown[] = [];
      // billing-hook is still a route, bound to ops since the run was saved for work.
      const lookup = (name: string) =>
        name === "billing-hook"
          ? ({ name, route: {}, secret: "s", profile: "ops" } as ResolvedRoute)
          : undefined;
      resumeSavedRuns(file, { resume: (r) => queued.push(...r) }, lookup, pipelineLogHooks(log.logger));
      expect(queued).toEqual([]);
      expect(log.messages()).toEqual([
        `[webhook] 2 saved agent run(s) not resumed — their route no longer exists (gone: 1, work/billing-hook: 1; billing-hook is bound to profile ops now, and a saved run resumes only under the profile it was accepted for); they stay in ${file} and run at the next start that finds their route (a reload that brings it back does not run them)`,
      ]);
    } finally {
      home.cleanup();
    }
  });

  it("a route that is a disabled subscription now is named so, with the command that enables it; among gone routes too", () => {
    const log = captureLogger();
    const hooks = pipelineLogHooks(log.logger);
    const disabled = () => new Set(["deploys"]);
    hooks.onRunsKept(
      [run("deploys", "d-1"), run("deploys", "d-2")],
      "the journal (/s)",
      undefined,
      [],
      disabled,
    );
    hooks.onRunsKept([run("deploys", "d-1")], "the journal (/s)", undefined, [run("gone", "g-1")], disabled);
    expect(log.messages()).toEqual([
      "[webhook] 2 saved agent run(s) not resumed — their route is a disabled subscription (deploys: 2; svc webhook enable deploys, then restart the gateway); they stay in the journal (/s) and run at the next start that finds their route (a reload that brings it back does not run them)",
      "[webhook] 1 saved agent run(s) and 1 pending coalescing group(s) not resumed — their route no longer exists (runs — deploys: 1; groups — gone: 1; deploys is a disabled subscription: svc webhook enable deploys, then restart the gateway); they stay in the journal (/s) and run at the next start that finds their route (a reload that brings it back does not run them; a group takes in its route's first event after that)",
    ]);
  });
});
