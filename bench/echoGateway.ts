import { writeFileSync } from "node:fs";
import { join } from "node:path";
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
