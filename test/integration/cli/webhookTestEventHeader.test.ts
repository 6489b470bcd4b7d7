import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { svc } from "./svc.js";

let gw: TestGateway;
afterEach(() => gw.stop());

describe("svc webhook test: an event type a header cannot carry (spec 4.3)", { timeout: 90_000 }, () => {
  it("a bad --event is a usage error naming the flag (not 'cannot reach the gateway'); a payload's is sent in the body", async () => {
    gw = await startTestGateway({ config: webhookConfig({}) });
    const port = String(gw.gateway.port);
    await svc(gw.home, ["webhook", "subscribe", "gh"]);
    const test = (...args: string[]) => svc(gw.home, ["webhook", "test", "gh", "--port", port, ...args]);
    const [newline, empty, unicode, spaced, fromPayload] = await Promise.all([
      test("--event", "push\nX-Injected: 1"),
      test("--event", ""),
      test("--event", "push→"),
      test("--event", " push"),
      test("--payload", '{"event_type":"déploiement→prod"}'),
    ]);
    // " push" is printable ASCII: the refusal names the spaces at its ends, which HTTP drops.
    expect(spaced.stderr).toContain("without spaces at either end");
    for (const refused of [newline, empty, unicode, spaced]) {
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("--event");
      expect(refused.stderr).toContain("X-Forge-Event header");
      expect(refused.stderr).not.toContain("cannot reach the gateway");
    }
    expect(fromPayload).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('"event":"déploiement→prod"'),
    });
  });
});
