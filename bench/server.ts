/**
 * One server for the load test, in its own process so its memory can be read from /proc:
 *   node --import tsx bench/server.ts gateway <svc-home>   the real gateway (echo agent, log delivery at WARN)
 *   node --import tsx bench/server.ts bare                  a bare uWS handler that reads the body and answers 202
 * Prints `{"port": N}` on stdout once listening; exits on SIGTERM.
 */

import uWS from "uWebSockets.js";
import { join } from "node:path";
import { startGateway } from "../src/gateway.js";
import { createLogger } from "../src/io/log.js";

const [mode, home] = process.argv.slice(2);

if (mode === "bare") {
  const app = uWS.App();
  app.post("/*", (res) => {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    const chunks: Buffer[] = [];
    res.onData((chunk, isLast) => {
      chunks.push(Buffer.from(Buffer.from(chunk)));
      if (!isLast || aborted) return;
      Buffer.concat(chunks);
      res.cork(() => {
        res
          .writeStatus("202 Accepted")
          .writeHeader("Content-Type", "application/json")
          .end('{"status":"accepted"}');
      });
    });
  });
  app.listen("127.0.0.1", 0, (socket) => {
    if (!socket) throw new Error("bare server cannot listen");
    process.stdout.write(`${JSON.stringify({ port: uWS.us_socket_local_port(socket) })}\n`);
  });
  process.on("SIGTERM", () => process.exit(0));
} else if (mode === "gateway" && home !== undefined) {
  // WARN level: every accepted run delivers to the log target at INFO, which would dominate the measurement.
  const logger = createLogger({ file: join(home, "logs", "gateway.log"), stdout: false, level: "warn" });
  const gateway = await startGateway({ home, port: 0, logger, env: { PATH: process.env.PATH ?? "" } });
  process.stdout.write(`${JSON.stringify({ port: gateway.port })}\n`);
  process.on("SIGTERM", () => {
    void gateway.stop().finally(() => process.exit(0));
  });
} else {
  process.stderr.write("usage: server.ts bare | gateway <svc-home>\n");
  process.exit(2);
}
