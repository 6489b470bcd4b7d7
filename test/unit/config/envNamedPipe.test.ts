import { execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { signalProcess } from "../../helpers/process.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe(".env served through a named pipe (as a secrets manager mounts one)", () => {
  it("is read as served, at each open: its variables apply", async () => {
    home = tempHome();
    home.write("config.yaml", "platforms:\n  webhook:\n    enabled: true\n");
    const pipe = join(home.dir, ".env");
    execFileSync("mkfifo", ["-m", "600", pipe]);
    // The writer serves every open of the pipe anew, as 1Password's mounted .env does. Opened again at
    // once, it could open while the last read was closing, find no reader left when it writes and die of
    // SIGPIPE (the next read's open then waited for a writer for good, holding the worker); a read opened
    // meanwhile read nothing. It ignores SIGPIPE, and waits a moment before serving the next open.
    const writer = spawn(
      "sh",
      ["-c", `trap '' PIPE; while :; do printf 'WEBHOOK_PORT=9123\\n' > "$0"; sleep 0.01; done`, pipe],
      {
        stdio: "ignore",
      },
    );
    try {
      const loaded = loadConfig({ home: home.dir, env: {} });
      expect(loaded.config.platforms.webhook.port).toBe(9123);
    } finally {
      signalProcess(writer.pid as number, "SIGKILL");
    }
  });
});
