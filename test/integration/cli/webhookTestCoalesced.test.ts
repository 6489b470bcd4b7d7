import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { writeRecordedRequest } from "../../helpers/recordedRequest.js";
import { svc } from "./svc.js";

let gw: TestGateway;
afterEach(() => gw.stop());

/**
 * A coalescing route answers `202 {"status":"coalesced"}` (spec 3.1) and runs nothing until its group fires,
 * up to max_wait_seconds later: `svc webhook test` and `redeliver` printed the answer alone, so a tester
 * waited for a run that had not started. They now say when it will.
 */
describe("svc webhook test (and redeliver) of a coalescing route", { timeout: 90_000 }, () => {
  it("notes when the group's run starts, and that the answer does not tell an event held in its key's group from one a run already dispatched superseded", async () => {
    gw = await startTestGateway({ config: webhookConfig({}) });
    gw.home.write(
      "webhook_subscriptions.json",
      JSON.stringify({
        prs: {
          secret: "prs-secret-5521",
          enabled: true,
          coalesce: { key: "pr.number", window_seconds: 45, max_wait_seconds: 120 },
        },
      }),
      0o600,
    );
    const port = String(gw.gateway.port);
    const note =
      "Note: prs coalesces events (coalesce.key pr.number), and a 202 coalesced does not say whether this one is held in its key's group (opened by it when none was pending), which runs once, with the group's latest event, when no event of that key came for 45 s, at the latest 120 s after the group's first event, or was superseded by a run its key's group had already dispatched, of an event received after this one (it then never runs) — svc webhook deliveries prs shows which, and the group's run\n";

    const grouped = await svc(gw.home, [
      "webhook",
      "test",
      "prs",
      "--port",
      port,
      "--payload",
      '{"pr":{"number":7}}',
    ]);
    expect(grouped.code).toBe(0);
    expect(grouped.stdout).toContain('202 Accepted\n{"status":"coalesced"}');
    expect(grouped.stderr).toBe(note);

    // A key that does not resolve is dispatched at once (202 accepted): nothing to wait for, and a note says
    // why it was not grouped (the default test payload has no pr.number; the answer alone left that unsaid).
    const atOnce = await svc(gw.home, ["webhook", "test", "prs", "--port", port]);
    expect(atOnce.stdout).toContain('"status":"accepted"');
    expect(atOnce.stderr).toBe(
      "Note: prs coalesces events on coalesce.key pr.number, which this payload gives no value (missing, null or empty): the event was not grouped, and its run starts at once — send a payload that has it (--payload) to see it held in its key's group\n",
    );
    const empty = await svc(gw.home, [
      "webhook",
      "test",
      "prs",
      "--port",
      port,
      "--payload",
      '{"pr":{"number":""}}',
    ]);
    expect(empty.stderr).toContain("which this payload gives no value (missing, null or empty)");

    writeRecordedRequest(gw.home, {
      id: "pr-8",
      route: "prs",
      status: 202,
      outcome: "coalesced",
      payload: JSON.stringify({ pr: { number: 8 } }),
    });
    const again = await svc(gw.home, ["webhook", "redeliver", "pr-8", "--port", port]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('{"status":"coalesced"}');
    expect(again.stderr).toBe(note);
  });
});
