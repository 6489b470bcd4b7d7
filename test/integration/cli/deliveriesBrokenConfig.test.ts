import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "./svc.js";

/**
 * `svc webhook deliveries` reads the history the gateway keeps on disk (docs/cli.md): a config.yaml that no
 * longer loads — an edit the running gateway's reload refused, keeping its running config — does not hide
 * what the gateway recorded. The rows are shown, and a note on stderr says what is wrong with the file.
 */
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ config: webhookConfig({ open: { secret: "INSECURE_NO_AUTH" } }) });
  const res = await postJson(gw.url("/webhooks/open"), { n: 1 }, { "X-Request-ID": "kept-1" });
  expect(res.status).toBe(202);
  await vi.waitFor(
    async () => {
      expect((await svc(gw.home, ["webhook", "deliveries"])).stdout).toContain("kept-1");
    },
    { timeout: 20_000, interval: 200 },
  );
});
afterAll(() => gw?.stop());

describe("svc webhook deliveries with a config.yaml that does not load", () => {
  it("shows the recorded rows, with the file's problem in a note on stderr", async () => {
    gw.home.write("config.yaml", "agent: [unclosed\n", 0o600);
    const listed = await svc(gw.home, ["webhook", "deliveries"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/kept-1 +open /);
    expect(listed.stderr).toContain("not valid YAML");
    expect(listed.stderr).toContain(
      "the delivery history below is read without it (its routes and platforms.webhook.delivery_history are not checked)",
    );
    const json = await svc(gw.home, ["webhook", "deliveries", "open", "--json"]);
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as Array<{ id: string }>).map((r) => r.id)).toEqual(["kept-1"]);
  });

  it("says no deliveries are recorded for a route without rows, rather than refusing the name", async () => {
    gw.home.write("config.yaml", "agent: [unclosed\n", 0o600);
    const listed = await svc(gw.home, ["webhook", "deliveries", "other"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^No deliveries recorded for other \(/);
  });
});
