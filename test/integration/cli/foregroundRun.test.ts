import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

describe("svc gateway run (foreground) and the other commands", { timeout: 90_000 }, () => {
  let home: TempHome;
  let child: ChildProcess | undefined;
  afterAll(() => {
    if (child?.exitCode === null) child.kill("SIGKILL");
    home.cleanup();
  });

  it("subscribe and test find the port of a foreground gateway started with --port 0; it is forgotten on exit", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()));
    const running = spawn(process.execPath, [...SVC_ARGV, "gateway", "run", "--port", "0"], {
      env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = running;
    let out = "";
    const port = await new Promise<string>((resolve, reject) => {
      running.stdout?.on("data", (d) => {
        out += d;
        const match = /Listening on 127\.0\.0\.1:(\d+)/.exec(out);
        if (match) resolve(match[1] as string);
      });
      running.on("exit", (code) => reject(new Error(`gateway exited ${code}: ${out}`)));
    });
    expect(port).not.toBe("0");
    const subscribed = await svc(home, ["webhook", "subscribe", "fg", "--prompt", "x"]);
    expect(subscribed.stdout).toContain(`URL:    http://127.0.0.1:${port}/webhooks/fg\n`);
    const sent = await svc(home, ["webhook", "test", "fg"]);
    expect(sent).toMatchObject({ code: 0, stdout: expect.stringMatching(/^202 /m) });
    const status = await svc(home, ["gateway", "status"]);
    expect(status.stdout).toContain(`Listening: 127.0.0.1:${port}`);

    const exited = new Promise((resolve) => running.on("exit", resolve));
    running.kill("SIGTERM");
    await exited;
    expect(existsSync(join(home.dir, "gateway.json"))).toBe(false);
    expect(existsSync(join(home.dir, "gateway.pid"))).toBe(false);
  });
});
