import { afterEach, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "./svc.js";

/**
 * The delivery history keeps a sender's event type cut to 200 characters (docs/operations.md). An emoji is
 * two UTF-16 units: a cut between them kept half of it, which `svc webhook deliveries --json` wrote as a
 * lone `\ud83d` (no Unicode text: a strict JSON reader refuses it, others read U+FFFD).
 */
let gw: TestGateway;
afterEach(() => gw.stop());

it("an event type cut at 200 characters right inside an emoji leaves the emoji out whole", {
  timeout: 60_000,
}, async () => {
  gw = await startTestGateway({ config: webhookConfig({ open: { secret: "INSECURE_NO_AUTH" } }) });
  const event = `${"x".repeat(199)}😀 after the cut`;
  const res = await postJson(gw.url("/webhooks/open"), { event_type: event }, { "X-Request-ID": "cut-1" });
  expect(res.status).toBe(202);
  const row = await vi.waitFor(
    async () => {
      const listed = await svc(gw.home, ["webhook", "deliveries", "--json"]);
      const rows = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
      const found = rows.find((r) => r.id === "cut-1");
      expect(found).toBeDefined();
      expect(listed.stdout).not.toMatch(/\\ud83d/i);
      return found;
    },
    { timeout: 20_000, interval: 200 },
  );
  expect(row?.event).toBe("x".repeat(199));
});
