import { createHmac } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import autocannon, { type Result } from "autocannon";
import { stringify } from "yaml";
import { type Gateway, type GatewayOptions, startGateway } from "../src/gateway/index.js";
import { createLogger } from "../src/io/log.js";

/**
 * The gateway the accepted-path benchmarks load: one signed route `pr` (no limit), the echo agent,
 * log delivery, logs at WARN to the home's file; `state` is the `state:` section (default `local`).
 */
export function startEchoGateway(
  home: string,
  secret: string,
  options: { state?: Record<string, unknown>; stateStore?: GatewayOptions["stateStore"] } = {},
): Promise<Gateway> {
  writeFileSync(
    join(home, "config.yaml"),
    stringify({
      ...(options.state === undefined ? {} : { state: options.state }),
      platforms: {
        webhook: {
          enabled: true,
          host: "127.0.0.1",
          rate_limit: 1_000_000_000,
          routes: { pr: { secret, prompt: "Review PR #{number} {title}" } },
        },
      },
      agent: { provider: "echo" },
    }),
  );
  const logger = createLogger({
    file: join(home, "logs", "gateway.log"),
    stdout: false,
    level: "warn",
    buffered: true,
  });
  return startGateway({
    home,
    port: 0,
    logger,
    env: { PATH: process.env.PATH ?? "" },
    ...(options.stateStore === undefined ? {} : { stateStore: options.stateStore }),
  });
}

/**
 * autocannon against a gateway from `startEchoGateway`: 32 connections for `seconds`, a ~1 KB body signed
 * with `secret`, a unique delivery id per request.
 */
export function loadEchoGateway(port: number, secret: string, seconds: number): Promise<Result> {
  const body = JSON.stringify({ number: 1347, title: "Update the README", padding: "x".repeat(900) });
  const signature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
  let n = 0;
  return autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: 32,
    duration: seconds,
    requests: [
      {
        method: "POST",
        path: "/webhooks/pr",
        body,
        setupRequest: (req: Record<string, unknown>) => ({
          ...req,
          headers: {
            "content-type": "application/json",
            "x-hub-signature-256": signature,
            "x-github-delivery": `load-${++n}`,
          },
        }),
      },
    ],
  });
}
