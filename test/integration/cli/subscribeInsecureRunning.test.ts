import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

let home: TempHome;
afterEach(async () => {
  await svc(home, ["gateway", "stop"]);
  home.cleanup();
});

describe("svc webhook subscribe --secret INSECURE_NO_AUTH and the running gateway's bind (spec 2.2 rule 5)", {
  timeout: 90_000,
}, () => {
  it("is refused while the gateway runs with --host 0.0.0.0 (it would skip the record: 404), though config.yaml says loopback", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()));
    const started = await svc(home, [
      "gateway",
      "start",
      "--host",
      "0.0.0.0",
      "--port",
      "0",
      "--timeout",
      "60",
    ]);
    expect(started.code).toBe(0);
    await svc(home, ["webhook", "subscribe", "kept"]);
    const stored = readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8");
    const res = await svc(home, ["webhook", "subscribe", "open", "--secret", "INSECURE_NO_AUTH"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      "open: --secret INSECURE_NO_AUTH is only allowed when the gateway binds to loopback (127.0.0.1, localhost, ::1), but the running gateway binds to 0.0.0.0",
    );
    expect(res.stdout).not.toContain("anyone who can reach this loopback address");
    expect(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8")).toBe(stored);
  });
});
