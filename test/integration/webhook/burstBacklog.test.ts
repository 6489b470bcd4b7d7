import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import type { Gateway } from "../../../src/gateway/index.js";
import { RUN_JOURNAL_DIR } from "../../../src/io/sessions/runJournal.js";
import { startGatewayInHome, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * A backlog of agent runs (saved at the last stop, or many coalescing groups firing at once) is worked
 * off without holding the gateway's answers: echo runs delivering to the log never wait for I/O, and
 * the run slots worked the whole queue off in one turn of the event loop while no request was read.
 */

let home: TempHome | undefined;
let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  home?.cleanup();
  home = undefined;
});

/** Delivery ids of the runs recorded in the run journal so far. */
function journalIds(dir: string): string[] {
  const journal = join(dir, "sessions", RUN_JOURNAL_DIR);
  if (!existsSync(journal)) return [];
  return readdirSync(journal).flatMap((name) =>
    readFileSync(join(journal, name), "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => (JSON.parse(line) as { delivery_id: string }).delivery_id),
  );
}

describe("a backlog of 10,000 queued echo runs", { timeout: 30_000 }, () => {
  it("/health and a new event are answered while the backlog is worked off; every run still runs once", async () => {
    const N = 10_000;
    home = tempHome();
    home.write(
      "config.yaml",
      stringify(
        webhookConfig(
          { pr: { secret: "INSECURE_NO_AUTH", prompt: "PR {n}" } },
          { rate_limit: 100_000 },
          { agent: { provider: "echo" } },
        ),
      ),
    );
    const runs = Array.from({ length: N }, (_, i) => ({
      profile: "default",
      routeName: "pr",
      deliveryId: `saved-${i}`,
      prompt: `saved ${i}`,
      extra: {},
      receivedAt: 0,
    }));
    home.write("webhook-pending-runs.json", JSON.stringify({ version: 1, runs }));
    gateway = await startGatewayInHome(home, 10_000);
    const base = `http://127.0.0.1:${gateway.port}`;

    const [health, accepted] = await Promise.all([
      fetch(`${base}/health`).then(async (res) => ({
        status: res.status,
        done: journalIds(home?.dir ?? ""),
      })),
      fetch(`${base}/webhooks/pr`, {
        method: "POST",
        body: JSON.stringify({ n: 1 }),
        headers: { "X-Request-ID": "new-1" },
      }).then(async (res) => ({ status: res.status, done: journalIds(home?.dir ?? "") })),
    ]);
    expect(health.status).toBe(200);
    expect(accepted.status).toBe(202);
    // Answered while most of the backlog still waited.
    expect(health.done.length).toBeLessThan(N / 2);
    expect(accepted.done.length).toBeLessThan(N / 2);

    await vi.waitFor(() => expect(journalIds(home?.dir ?? "").length).toBe(N + 1), {
      timeout: 20_000,
      interval: 100,
    });
    const counts = new Map<string, number>();
    for (const id of journalIds(home.dir)) counts.set(id, (counts.get(id) ?? 0) + 1);
    expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
    expect(counts.has("new-1")).toBe(true);
  });
});
