import { join } from "node:path";
import { sign } from "@octokit/webhooks-methods";
import { describe, expect, it, vi } from "vitest";
import { coalesceNote } from "../../../src/actors/coalescer.js";
import { findRunSession } from "../../../src/io/sessions/runJournal.js";
import { runSessionKey } from "../../../src/io/sessions/store.js";
import { gatewayPerTest, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Spec 3.1 under a burst: hundreds of signed events for a handful of keys sent at once, with repeated
 * deliveries and events whose key does not resolve mixed in. Each key gets exactly one run when its
 * quiet window passes (fake clock), carrying the count of the events it superseded; a repeated delivery
 * is answered duplicate and not counted; an unresolvable key runs at once. Nothing is lost.
 */

const SECRET = "coalesce-burst";
const perTest = gatewayPerTest();

async function send(gw: TestGateway, id: string, payload: Record<string, unknown>) {
  const body = JSON.stringify(payload);
  return postJson(gw.url("/webhooks/pr"), body, {
    "X-GitHub-Event": "pull_request",
    "X-GitHub-Delivery": id,
    "X-Hub-Signature-256": await sign(SECRET, body),
  });
}

/** Reply lines the log target wrote, by delivery id. */
function replies(gw: TestGateway): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of gw.logs()) {
    if (!line.msg.startsWith("[webhook] pr reply:")) continue;
    const id = line.delivery_id as string;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe.each(["uws", "node"] as const)("a coalescing burst (%s server)", (http) => {
  it("8 keys x 50 events sent at once, each delivery also repeated, plus 40 without a key: one run per key with the right count, duplicates not counted, nothing lost", {
    timeout: 30_000,
  }, async () => {
    const gw = await perTest.start({
      http,
      fakeTimers: true,
      config: webhookConfig(
        { pr: { secret: SECRET, prompt: "PR {number} rev {rev}", coalesce: { key: "number" } } },
        { rate_limit: 100_000 },
        { agent: { provider: "echo", max_concurrent_runs: 4 } },
      ),
    });
    const KEYS = 8;
    const PER_KEY = 50;
    const sends: Array<{ id: string; payload: Record<string, unknown> }> = [];
    for (let rev = 0; rev < PER_KEY; rev++) {
      for (let key = 0; key < KEYS; key++) {
        const id = `k${key}-r${rev}`;
        sends.push({ id, payload: { number: key, rev } }, { id, payload: { number: key, rev } });
      }
    }
    const loose = Array.from({ length: 40 }, (_, i) => ({ id: `loose-${i}`, payload: { rev: i } }));
    const all = [...sends, ...loose];
    const answers = await Promise.all(all.map(({ id, payload }) => send(gw, id, payload)));

    const byBody = new Map<string, number>();
    for (const answer of answers) {
      const key = `${answer.status} ${answer.body.status}`;
      byBody.set(key, (byBody.get(key) ?? 0) + 1);
    }
    // Every delivery of a key is coalesced once and answered duplicate once; the keyless ones run.
    expect(Object.fromEntries(byBody)).toEqual({
      "202 coalesced": KEYS * PER_KEY,
      "200 duplicate": KEYS * PER_KEY,
      "202 accepted": loose.length,
    });
    for (const [i, { id }] of loose.entries()) expect(answers[sends.length + i]?.body.delivery_id).toBe(id);

    // The keyless events run now; no group fires before its quiet window.
    await vi.waitFor(() => expect(replies(gw).size).toBe(loose.length), { timeout: 10_000, interval: 50 });
    gw.clock.advance(29_999);
    expect(gw.logs().filter((l) => l.msg.endsWith("coalesced group dispatched"))).toEqual([]);
    gw.clock.advance(1);

    const dispatched = gw.logs().filter((l) => l.msg.endsWith("coalesced group dispatched"));
    expect(dispatched.map((l) => [l.superseded, l.reason])).toEqual(
      Array.from({ length: KEYS }, () => [PER_KEY - 1, "quiet_window"]),
    );
    await vi.waitFor(() => expect(replies(gw).size).toBe(loose.length + KEYS), {
      timeout: 10_000,
      interval: 50,
    });
    const counts = replies(gw);
    expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
    // Each key's run is one of its events, with the note naming the other 49 as superseded.
    // A run's session file is written with the turn's other file writes: it may follow its reply.
    const sessions = join(gw.home.dir, "sessions");
    await vi.waitFor(
      () => {
        for (const line of dispatched) {
          const id = line.delivery_id as string;
          const key = /^k(\d+)-r(\d+)$/.exec(id);
          expect(key).not.toBeNull();
          const run = findRunSession(sessions, runSessionKey("pr", id));
          expect(run?.entries[0]?.content).toBe(
            `${coalesceNote(PER_KEY - 1)}\n\nPR ${key?.[1]} rev ${key?.[2]}`,
          );
        }
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(new Set(dispatched.map((l) => /^k(\d+)/.exec(l.delivery_id as string)?.[1])).size).toBe(KEYS);
  });
});
