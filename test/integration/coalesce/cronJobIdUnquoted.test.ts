import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  RECORDER_AGENT,
  type RecordedRun,
  readRun,
  recorderAgent,
  startTestGateway,
  type TestGateway,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A cron job's id is 8 random hex characters, so some ids are all digits (`00012345`) or digits around an
 * `e` (`1234e567`): copied unquoted from `svc cron list` into config.yaml, YAML reads them as numbers
 * (12345, 1.234e570). The route must still fire that job, not refuse startup or fire another id.
 */
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const job = (id: string) => ({
  id,
  name: `job-${id}`,
  schedule: "every 1d",
  prompt: `job ${id} prompt`,
  deliver: "log",
  deliver_extra: {},
  state: "enabled",
  next_run: "2099-01-01T00:00:00.000Z",
  created_at: "2026-11-22T00:00:00.000Z",
});

function runs(g: TestGateway): RecordedRun[] {
  let files: string[];
  try {
    files = readdirSync(join(g.home.dir, "runs")).filter((f) => f.endsWith(".json"));
  } catch {
    return [];
  }
  return files.map((f) => readRun(g.home, f.slice(0, -5)) as RecordedRun);
}

describe("cron_job written as an unquoted id that YAML reads as a number", () => {
  it.each(["00012345", "1234e567", "12345678"])("cron_job: %s fires exactly that job", async (id) => {
    const other = id === "12345678" ? "12345679" : "12345";
    gw = await startTestGateway({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "cron/jobs.json": JSON.stringify({
          revision: 1,
          jobs: { [id]: job(id), [other]: job(other) },
        }),
      },
      config: `${recorderAgentYaml()}
platforms:
  webhook:
    enabled: true
    host: 127.0.0.1
    routes:
      nightly:
        secret: INSECURE_NO_AUTH
        cron_job: ${id}
`,
    });
    const res = await postJson(gw.url("/webhooks/nightly"), { n: 1 }, { "X-Request-ID": "c1" });
    expect(res.status).toBe(202);
    const g = gw;
    const [run] = await vi.waitFor(
      () => {
        const found = runs(g);
        if (found.length === 0) throw new Error("no run yet");
        return found;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(run?.prompt).toContain(`job ${id} prompt`);
  });
});

function recorderAgentYaml(): string {
  const agent = recorderAgent();
  return `agent: ${JSON.stringify(agent)}`;
}
