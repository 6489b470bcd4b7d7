import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const OPEN = { secret: "INSECURE_NO_AUTH" };

describe("a static route naming a script or cron job that is not there is reported at startup and reload", () => {
  it("warns for the missing script and the unknown job, not for the ones that exist", async () => {
    gw = await startTestGateway({
      config: webhookConfig({
        missing: { ...OPEN, script: "absent.sh" },
        escapes: { ...OPEN, script: "../config.yaml" },
        present: { ...OPEN, script: "here.sh" },
        nojob: { ...OPEN, cron_job: "nightly" },
      }),
      files: { "scripts/here.sh": "#!/bin/sh\ncat\n" },
    });
    const running = gw;
    const warnings = () =>
      running
        .logs()
        .filter((l) => l.level === 40)
        .map((l) => l.msg);
    await vi.waitFor(() => expect(warnings().length).toBeGreaterThanOrEqual(3));
    expect(warnings()).toContainEqual(
      expect.stringMatching(
        /routes\.missing\.script: absent\.sh — script not found .*every event on this route is ignored/,
      ),
    );
    expect(warnings()).toContainEqual(
      expect.stringMatching(
        /routes\.escapes\.script: \.\.\/config\.yaml — path leaves the scripts directory/,
      ),
    );
    expect(warnings()).toContainEqual(
      expect.stringMatching(
        /routes\.nojob\.cron_job: nightly — no such job in .*cron\/jobs\.json .*every event on this route is dropped/,
      ),
    );
    expect(warnings().some((w) => w.includes("routes.present"))).toBe(false);

    running.home.write("config.yaml", stringify(webhookConfig({ later: { ...OPEN, script: "gone.py" } })));
    running.gateway.reload();
    await vi.waitFor(() =>
      expect(warnings()).toContainEqual(
        expect.stringMatching(/routes\.later\.script: gone\.py — script not found/),
      ),
    );
  });

  it("a cron store that cannot be read is named as such: its route's events are answered 503, not dropped", async () => {
    gw = await startTestGateway({
      config: webhookConfig({ fires: { ...OPEN, cron_job: "nightly" } }),
      files: { "cron/jobs.json": '{"revision": 1, "jobs": {' },
    });
    const running = gw;
    await vi.waitFor(() =>
      expect(running.logs().map((l) => l.msg)).toContainEqual(
        expect.stringMatching(
          /routes\.fires\.cron_job: nightly — .*cron\/jobs\.json cannot be read: .*every event on this route is answered 503 \(the sender retries\)/,
        ),
      ),
    );
  });
});
