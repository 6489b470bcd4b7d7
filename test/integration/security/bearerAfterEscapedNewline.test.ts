import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

let gw: TestGateway;
beforeAll(async () => {
  // The default prompt quotes the payload as JSON, whose newline before `Bearer` is the two characters `\n`.
  gw = await startTestGateway({
    config: webhookConfig(
      { dump: { secret: "INSECURE_NO_AUTH", deliver: "log" } },
      {},
      { agent: { provider: "echo" } },
    ),
  });
});
afterAll(async () => {
  await gw.stop();
});

it("a Bearer token on a line of its own in a payload the log delivery quotes is written [redacted], as one after a space", async () => {
  const res = await postJson(
    gw.url("/webhooks/dump"),
    {
      a: "Bearer sk-abcdefghijklmnop1",
      b: "curl -v\nBearer sk-abcdefghijklmnop2",
      c: "\tBasic dXNlcjpwYTU1d29yZA==",
    },
    { "x-request-id": "dump-1" },
  );
  expect(res.status).toBe(202);
  const reply = await vi.waitFor(
    () => {
      const found = gw.logs().find((l) => l.delivery_id === "dump-1" && l.msg.includes(" reply:"));
      if (found === undefined) throw new Error("not delivered yet");
      return found.msg;
    },
    { timeout: 15_000, interval: 50 },
  );
  expect(reply).toContain('"a": "Bearer [redacted]"');
  expect(reply).toContain('"b": "curl -v\\nBearer [redacted]"');
  expect(reply).toContain('"c": "\\tBasic [redacted]"');
  const log = readFileSync(join(gw.home.dir, "logs", "gateway.log"), "utf8");
  for (const secret of ["sk-abcdefghijklmnop1", "sk-abcdefghijklmnop2", "dXNlcjpwYTU1d29yZA"])
    expect(log).not.toContain(secret);
});
