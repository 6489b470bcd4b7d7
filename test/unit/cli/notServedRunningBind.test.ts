import { afterEach, describe, expect, it } from "vitest";
import { notServed } from "../../../src/cli/webhook/notServed.js";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * The gateway judges an INSECURE_NO_AUTH subscription by the address it binds (`svc gateway start --host`
 * wins over platforms.webhook.host): svc webhook list and enable, which say whether it is served, must too.
 */
const homes: TempHome[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) home.cleanup();
});

const RECORD = { secret: "INSECURE_NO_AUTH", prompt: "p", enabled: true };

function loadedWithHost(host: string) {
  const home = tempHome();
  homes.push(home);
  home.write("config.yaml", `platforms:\n  webhook:\n    enabled: true\n    host: "${host}"\n`);
  return loadConfig({ home: home.dir, env: {} });
}

describe("notServed: INSECURE_NO_AUTH and the running gateway's bind", () => {
  it("a loopback config, but a gateway started with --host 0.0.0.0: not served, naming the running bind", () => {
    const loaded = loadedWithHost("127.0.0.1");
    const why = notServed(loaded, "subs.json", "dev", RECORD, { host: "0.0.0.0", port: 8644 });
    expect(why).toContain("the running gateway binds to 0.0.0.0 (started with --host 0.0.0.0");
    expect(why).toContain("svc webhook subscribe dev --secret <secret>");
  });

  it("a non-loopback config, but a gateway started with --host 127.0.0.1: served", () => {
    const loaded = loadedWithHost("0.0.0.0");
    expect(notServed(loaded, "subs.json", "dev", RECORD, { host: "127.0.0.1", port: 8644 })).toBeUndefined();
  });

  it("no gateway running: the configured host decides, as before", () => {
    expect(notServed(loadedWithHost("127.0.0.1"), "subs.json", "dev", RECORD)).toBeUndefined();
    expect(notServed(loadedWithHost("0.0.0.0"), "subs.json", "dev", RECORD)).toContain(
      "platforms.webhook.host is 0.0.0.0",
    );
  });
});
