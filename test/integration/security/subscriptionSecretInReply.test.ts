import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { readHistory } from "../../../src/io/stores/deliveryHistory.js";
import { inHome, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { cliConfig, svc } from "../cli/svc.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const ROUTE_SECRET = "route-secret-5531-abcdef";
const SUB_SECRET = "sub-secret-5532-abcdef";
const LATER_SECRET = "later-secret-5533-abcdef";

const subscription = (secret: string) => ({
  secret,
  prompt: "x",
  deliver: "log",
  enabled: true,
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
});

/** Everything the gateway wrote about runs: its log, the delivery history and the run journals. */
function written(home: string): string {
  const journals = readdirSync(join(home, "sessions", "webhook-runs")).map((f) =>
    join("sessions", "webhook-runs", f),
  );
  return ["logs/gateway.log", "deliveries/history.jsonl", ...journals]
    .map((file) => readFileSync(join(home, file), "utf8"))
    .join("\n");
}

// A command agent a payload talked into reading the data directory: the reply of config.yaml's route secrets
// was delivered [redacted], but a subscription's secret (webhook_subscriptions.json) went out as it is.
it("a command agent's reply quoting a subscription's secret, also of one added while the gateway runs, is delivered [redacted]", async () => {
  gw = await startTestGateway({
    files: {
      "webhook_subscriptions.json": JSON.stringify({ sub: subscription(SUB_SECRET) }),
      "reply.txt": `keys: ${ROUTE_SECRET} ${SUB_SECRET} ${LATER_SECRET}\n`,
    },
    config: webhookConfig(
      { probe: { secret: "INSECURE_NO_AUTH", prompt: "x" }, own: { secret: ROUTE_SECRET, prompt: "x" } },
      {},
      {
        agent: {
          provider: "command",
          command: ["sh", "-c", 'cat >/dev/null; cat "$0"', inHome("reply.txt")],
        },
      },
    ),
  });
  const home = gw.home.dir;
  const url = (path: string) => gw?.url(path) ?? "";
  const runDone = (id: string) =>
    vi.waitFor(
      () => {
        const run = readHistory(join(home, "deliveries")).find((r) => r.kind === "run" && r.id === id);
        expect(run).toMatchObject({ outcome: "ok" });
      },
      { timeout: 20_000 },
    );
  expect((await postJson(url("/webhooks/probe"), { x: 1 }, { "X-Request-Id": "sub-1" })).status).toBe(202);
  await runDone("sub-1");
  expect(written(home)).toContain(`keys: [redacted] [redacted] ${LATER_SECRET}`);
  expect(written(home)).not.toContain(ROUTE_SECRET);
  expect(written(home)).not.toContain(SUB_SECRET);
  // A subscription created while the gateway runs (svc webhook subscribe writes the file): served, and hidden.
  writeFileSync(
    join(home, "webhook_subscriptions.json"),
    JSON.stringify({ sub: subscription(SUB_SECRET), later: subscription(LATER_SECRET) }),
    { mode: 0o600 },
  );
  await vi.waitFor(
    async () => {
      const answer = await postJson(url("/webhooks/later"), { x: 1 }, { "X-Request-Id": "later-probe" });
      expect(answer.status).toBe(401);
    },
    { timeout: 10_000 },
  );
  expect((await postJson(url("/webhooks/probe"), { x: 1 }, { "X-Request-Id": "sub-2" })).status).toBe(202);
  await runDone("sub-2");
  // The first run, before that subscription existed, delivered it as any text.
  expect(written(home)).toContain(`keys: [redacted] [redacted] ${LATER_SECRET}`);
  expect(written(home)).toContain("keys: [redacted] [redacted] [redacted]");
});

it("svc cron run: a command agent's reply quoting a subscription's secret is printed [redacted]", async () => {
  const home = tempHome();
  try {
    home.write("webhook_subscriptions.json", JSON.stringify({ sub: subscription(SUB_SECRET) }), 0o600);
    const reply = home.write("reply.txt", `keys: ${SUB_SECRET}\n`);
    const command = ["sh", "-c", 'cat >/dev/null; cat "$0"', reply];
    home.write("config.yaml", stringify(cliConfig({}, { agent: { provider: "command", command } })), 0o600);
    const created = await svc(home, [
      "cron",
      "create",
      "--name",
      "n",
      "--schedule",
      "@daily",
      "--prompt",
      "x",
    ]);
    expect(created.code).toBe(0);
    const run = await svc(home, ["cron", "run", "n"]);
    expect(run.stdout).toBe("keys: [redacted]\n");
    expect(readFileSync(join(home.dir, "cron", "jobs.json"), "utf8")).not.toContain(SUB_SECRET);
  } finally {
    home.cleanup();
  }
});
