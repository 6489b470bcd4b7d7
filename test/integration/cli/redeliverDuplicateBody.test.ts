import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

let gw: TestGateway | undefined;
let home: TempHome | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  home?.cleanup();
  home = undefined;
});

const at = new Date().toISOString();
/** A request record of `dup-1` on `dup-body-route`, as the gateway writes it. */
const record = (status: number, outcome: string, payload: string) =>
  JSON.stringify({
    kind: "request",
    id: "dup-1",
    at,
    route: "dup-body-route",
    status,
    outcome,
    content_type: "application/json",
    payload_encoding: "utf8",
    payload,
  });

describe("svc webhook redeliver of an ID answered twice on one route, with another body the second time", {
  timeout: 90_000,
}, () => {
  it("sends the request that was taken, not the duplicate that never ran", async () => {
    gw = await startTestGateway({
      config: webhookConfig({ "dup-body-route": { secret: "dup-body-secret-7781" } }),
    });
    const { home } = gw;
    home.write(
      "deliveries/history.jsonl",
      `${record(202, "accepted", '{"v":"A-ran"}')}\n${record(200, "duplicate", '{"v":"B-never-ran"}')}\n`,
      0o600,
    );
    const res = await svc(home, ["webhook", "redeliver", "dup-1", "--port", String(gw.gateway.port)]);
    expect(res.code).toBe(0);
    await vi.waitFor(() => {
      const sent = readFileSync(join(home.dir, "deliveries", "history.jsonl"), "utf8")
        .split("\n")
        .filter((line) => line.includes('"redelivery_of":"dup-1"'))
        .map((line) => (JSON.parse(line) as { payload?: unknown }).payload);
      // Kept as JSON in the line when the body is JSON.
      expect(sent).toEqual([{ v: "A-ran" }]);
    });
  });

  // Another instance on the same Redis took the ID; this one answered its sender's retry, with another body.
  for (const backend of ["local", "redis"] as const)
    it(`refuses an ID this history holds only as a duplicate (state.backend: ${backend}): its body never ran`, async () => {
      home = tempHome();
      const state =
        backend === "redis" ? { backend, redis_url: "redis://127.0.0.1:1" } : { backend: "local" };
      home.write(
        "config.yaml",
        stringify(cliConfig({ "dup-body-route": { secret: "dup-body-secret-7781" } }, { state })),
        0o600,
      );
      home.write("deliveries/history.jsonl", `${record(200, "duplicate", '{"v":"B-never-ran"}')}\n`, 0o600);
      const res = await svc(home, ["webhook", "redeliver", "dup-1", "--port", "9"]);
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(
        backend === "redis"
          ? 'delivery "dup-1" was answered here only as a duplicate, which never ran (and may have come with another body): its request was taken by another gateway instance, which keeps its payload — run svc webhook redeliver there'
          : 'delivery "dup-1" is in the recent history only as a duplicate, which never ran (and may have come with another body); the request it repeated is no longer kept',
      );
    });

  it("with state.backend: redis, an ID refused here (401, its payload not kept) says another instance may have taken it", async () => {
    home = tempHome();
    const state = { backend: "redis", redis_url: "redis://127.0.0.1:1" };
    home.write(
      "config.yaml",
      stringify(cliConfig({ "dup-body-route": { secret: "dup-body-secret-7781" } }, { state })),
      0o600,
    );
    const refused = JSON.stringify({
      kind: "request",
      id: "dup-1",
      at,
      route: "dup-body-route",
      status: 401,
      outcome: "Invalid signature",
    });
    home.write("deliveries/history.jsonl", `${refused}\n`, 0o600);
    const res = await svc(home, ["webhook", "redeliver", "dup-1", "--port", "9"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      "so it cannot be redelivered — if another gateway instance took it, run svc webhook redeliver there (with that instance's SVC_HOME)",
    );
  });
});
