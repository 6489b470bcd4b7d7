import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

let home: TempHome;
afterEach(async () => {
  await svc(home, ["gateway", "stop"]);
  home.cleanup();
});

describe("svc webhook subscribe|test use the running gateway's address", { timeout: 90_000 }, () => {
  it("a gateway started with --host and --port is where the URL points and the test event goes", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()));
    // 127.0.0.2 is loopback on Linux, but not the configured 127.0.0.1: only the running gateway knows it.
    const started = await svc(home, [
      "gateway",
      "start",
      "--host",
      "127.0.0.2",
      "--port",
      "0",
      "--timeout",
      "60",
    ]);
    expect(started.code).toBe(0);
    const port = /listening on 127\.0\.0\.2:(\d+)/.exec(started.stdout)?.[1];
    const subscribed = await svc(home, ["webhook", "subscribe", "a"]);
    expect(subscribed.stdout).toContain(`URL:    http://127.0.0.2:${port}/webhooks/a\n`);
    const sent = await svc(home, ["webhook", "test", "a"]);
    expect(sent.stdout).toContain(`POST http://127.0.0.2:${port}/webhooks/a\n202 `);
    expect(sent.code).toBe(0);
  });
});
