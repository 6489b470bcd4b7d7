import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { readHistory } from "../../../src/io/stores/deliveryHistory.js";
import { inHome, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

let gw: TestGateway;
afterEach(() => gw.stop());

/** An agent that fails printing its own command line on stderr, as a CLI refusing its arguments does. */
const FAILING_AGENT = '#!/bin/sh\ncat >/dev/null\necho "fatal: cannot start with $*" >&2\nexit 2\n';

it("a command agent that fails quoting its arguments does not put the credentials of agent.command into the log, the delivery history or the run journal", async () => {
  gw = await startTestGateway({
    files: {
      "agent/fail.sh": FAILING_AGENT,
      ".env": "AGENT_KEY=ak-live-5521\nPLAIN_ARG=pos-secret-5522\n",
    },
    config: webhookConfig(
      { probe: { secret: "INSECURE_NO_AUTH" } },
      {},
      {
        agent: {
          provider: "command",
          command: [
            inHome("agent/fail.sh"),
            "--api-key",
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
            "${AGENT_KEY}",
            "--db",
            "postgres://app:pw-5523@db/app?sslmode=require&password=pw-5524",
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
            "${PLAIN_ARG}",
          ],
        },
      },
    ),
  });
  const accepted = await postJson(gw.url("/webhooks/probe"), { x: 1 }, { "X-Request-Id": "cmd-secret-1" });
  expect(accepted.status).toBe(202);
  await vi.waitFor(
    () => {
      const run = readHistory(join(gw.home.dir, "deliveries")).find(
        (r) => r.kind === "run" && r.id === "cmd-secret-1",
      );
      expect(run).toMatchObject({ outcome: "failed" });
    },
    { timeout: 20_000 },
  );
  const journals = readdirSync(join(gw.home.dir, "sessions", "webhook-runs")).map((f) =>
    join("sessions", "webhook-runs", f),
  );
  const written = ["logs/gateway.log", "deliveries/history.jsonl", ...journals]
    .map((file) => readFileSync(join(gw.home.dir, file), "utf8"))
    .join("\n");
  expect(written).toContain(
    "agent command exited with code 2: fatal: cannot start with --api-key [redacted]",
  );
  for (const secret of ["ak-live-5521", "pos-secret-5522", "pw-5523", "pw-5524"])
    expect(written).not.toContain(secret);
});
