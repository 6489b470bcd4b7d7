import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

let running: TempHome;
let other: TempHome;
afterEach(async () => {
  await svc(running, ["gateway", "stop"]);
  running.cleanup();
  other.cleanup();
});

/**
 * The quick start's two terminals with different SVC_HOMEs (the gateway started from one shell, the
 * subscription made from another): `svc webhook test` posted to the configured port, where the other
 * home's gateway answered `404 Unknown route` (or `401 Invalid signature`), with nothing saying that no
 * gateway of this SVC_HOME runs.
 */
describe("svc webhook test answered by the gateway of another SVC_HOME", { timeout: 90_000 }, () => {
  it("says that no gateway of this SVC_HOME runs and who answered; not for its own gateway's 404", async () => {
    running = tempHome();
    other = tempHome();
    running.write("config.yaml", stringify(cliConfig()));
    const started = await svc(running, ["gateway", "start", "--timeout", "60"]);
    expect(started.code).toBe(0);
    const port = Number(/listening on 127\.0\.0\.1:(\d+)/.exec(started.stdout)?.[1]);
    const config = cliConfig();
    (config.platforms as { webhook: { port: number } }).webhook.port = port;
    other.write("config.yaml", stringify(config));
    expect((await svc(other, ["webhook", "subscribe", "parity-other-home"])).code).toBe(0);
    const sent = await svc(other, ["webhook", "test", "parity-other-home"]);
    expect(sent.stdout).toContain("404 Not Found");
    expect(sent.code).toBe(1);
    expect(sent.stderr).toContain(
      `Note: no gateway of ${other.dir} is running (svc gateway status), so this answer came from another process listening at 127.0.0.1:${port} — likely a gateway started with another SVC_HOME`,
    );
    // The running gateway's own 404 (a disabled subscription) is its answer: no such note.
    expect((await svc(running, ["webhook", "subscribe", "parity-own-home"])).code).toBe(0);
    expect((await svc(running, ["webhook", "disable", "parity-own-home"])).code).toBe(0);
    const own = await svc(running, ["webhook", "test", "parity-own-home"]);
    expect(own.stdout).toContain("404 Not Found");
    expect(own.stderr).not.toContain("no gateway of");
  });
});
