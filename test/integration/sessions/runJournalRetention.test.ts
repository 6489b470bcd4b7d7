import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { fakeClock, gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { journalLines } from "../../helpers/runJournal.js";

const perTest = gatewayPerTest();
const OPEN = "INSECURE_NO_AUTH";
const NOW = Date.parse("2030-01-10T12:00:00Z");

/** Day journals: one 9 days past (expired: 7 are kept), one 5 days past (kept), under `sessions`. */
const dayFiles = (sessions: string) => ({
  [`${sessions}/webhook-runs/2030-01-01.jsonl`]: '{"key":"webhook:gh:old"}\n',
  [`${sessions}/webhook-runs/2030-01-05.jsonl`]: '{"key":"webhook:gh:kept"}\n',
});

describe("run journal retention on the gateway's clock", () => {
  // The journal was dated, and its expired days judged, by the machine's clock (`new Date()`), not by the
  // clock the gateway is given: a gateway on a fake clock (or one whose clock source is not the system's)
  // wrote today's runs under the machine's day and kept days its own clock says are long past.
  it("a run is journaled under the gateway clock's day, and days past the 7 kept by that clock are removed", async () => {
    const gw = await perTest.start({
      clock: fakeClock(NOW),
      files: dayFiles("sessions"),
      config: webhookConfig({ gh: { secret: OPEN, prompt: "hi" } }, {}, { agent: { provider: "echo" } }),
    });
    const dir = join(gw.home.dir, "sessions", "webhook-runs");
    expect((await postJson(gw.url("/webhooks/gh"), {}, { "X-Request-ID": "r-1" })).status).toBe(202);
    await vi.waitFor(
      () => expect(journalLines(gw.home.dir).map((line) => line.delivery_id)).toContain("r-1"),
      {
        timeout: 5000,
        interval: 20,
      },
    );
    expect(readdirSync(dir).sort()).toEqual(["2030-01-05.jsonl", "2030-01-10.jsonl"]);
    expect(journalLines(gw.home.dir).find((line) => line.delivery_id === "r-1")?.at).toBe(
      new Date(NOW).toISOString(),
    );
  });

  // Days expired only at a profile's first run: a named profile that no longer gets events (or none since
  // the start) kept every day of prompts and replies for good.
  it("at start, expired days are removed for every profile on disk, not only when a run is recorded", async () => {
    const gw = await perTest.start({
      clock: fakeClock(NOW),
      files: {
        ...dayFiles("sessions"),
        ...dayFiles("profiles/work/sessions"),
        ...dayFiles("profiles/idle/sessions"),
        "profiles/work/sessions/webhook-runs/notes.txt": "not a day journal\n",
      },
      config: webhookConfig({ gh: { secret: OPEN, prompt: "hi" } }, {}, { agent: { provider: "echo" } }),
    });
    for (const sessions of ["sessions", "profiles/work/sessions", "profiles/idle/sessions"]) {
      const dir = join(gw.home.dir, sessions, "webhook-runs");
      expect(existsSync(join(dir, "2030-01-01.jsonl")), sessions).toBe(false);
      expect(existsSync(join(dir, "2030-01-05.jsonl")), sessions).toBe(true);
    }
    expect(existsSync(join(gw.home.dir, "profiles/work/sessions/webhook-runs/notes.txt"))).toBe(true);
  });
});
