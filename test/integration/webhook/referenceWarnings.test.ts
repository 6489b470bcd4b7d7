import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const OPEN = { secret: "INSECURE_NO_AUTH" };

describe("a static route naming a script, cron job or in_file list that is not there is reported at startup and reload", () => {
  it("warns for the missing script, the unknown job and the unusable in_file lists, not for the ones that exist", async () => {
    gw = await startTestGateway({
      config: webhookConfig({
        missing: { ...OPEN, script: "absent.sh" },
        escapes: { ...OPEN, script: "../config.yaml" },
        present: { ...OPEN, script: "here.sh" },
        folder: { ...OPEN, script: "tools" },
        nojob: { ...OPEN, cron_job: "nightly" },
        nolist: {
          ...OPEN,
          filters: [
            { field: "a", in_file: "lists/here.txt" },
            { any: [{ field: "b", equals: 1 }, { not: { field: "c", in_file: "lists/absent.txt" } }] },
            { field: "d", in_file: "lists/broken.json" },
          ],
        },
      }),
      files: {
        "scripts/here.sh": "#!/bin/sh\ncat\n",
        "scripts/tools/helper.py": "print('{}')\n",
        "lists/here.txt": "alice\n",
        "lists/broken.json": '["a",]',
      },
    });
    const running = gw;
    const warnings = () =>
      running
        .logs()
        .filter((l) => l.level === 40)
        .map((l) => l.msg);
    await vi.waitFor(() => expect(warnings().length).toBeGreaterThanOrEqual(5), { timeout: 10_000 });
    expect(warnings()).toContainEqual(
      expect.stringMatching(
        /routes\.nolist\.filters\[1\]\.any\[1\]\.not\.in_file: lists\/absent\.txt — \S+\/lists\/absent\.txt cannot be used \(ENOENT.*\); until it can, this filter does not match and the events it decides are ignored$/,
      ),
    );
    expect(warnings()).toContainEqual(
      expect.stringMatching(
        /routes\.nolist\.filters\[2\]\.in_file: lists\/broken\.json — .* cannot be used \(not valid JSON/,
      ),
    );
    expect(warnings().some((w) => w.includes("filters[0]"))).toBe(false);
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
        /^\[webhook\] \S+: platforms\.webhook\.routes\.folder\.script: tools — not a file/,
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
    await vi.waitFor(
      () =>
        expect(warnings()).toContainEqual(
          expect.stringMatching(/routes\.later\.script: gone\.py — script not found/),
        ),
      { timeout: 10_000 },
    );
  });

  it("a cron store that cannot be read is named as such: its route's events are answered 503, not dropped", async () => {
    gw = await startTestGateway({
      config: webhookConfig({ fires: { ...OPEN, cron_job: "nightly" } }),
      files: { "cron/jobs.json": '{"revision": 1, "jobs": {' },
    });
    const running = gw;
    await vi.waitFor(
      () =>
        expect(running.logs().map((l) => l.msg)).toContainEqual(
          expect.stringMatching(
            /routes\.fires\.cron_job: nightly — .*cron\/jobs\.json cannot be read: .*every event on this route is answered 503 \(the sender retries\)/,
          ),
        ),
      { timeout: 10_000 },
    );
  });
});
