import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const WARNING =
  "Warning: Listening on every network interface (0.0.0.0:8644): anyone who can reach this machine can post to its routes — set platforms.webhook.host: 127.0.0.1 to accept senders on this machine only, or keep it and make sure every route has a secret\n";

describe("svc gateway setup --enable in a config.yaml that sets no host (0.0.0.0, every interface)", () => {
  it("warns, as the gateway's start and svc config check do, after writing the settings", async () => {
    home = tempHome();
    // The README's "Use a real model": a config.yaml created for the agent, the adapter then turned on by setup.
    home.write(
      "config.yaml",
      stringify({ agent: { provider: "openai", model: "llama3.1", base_url: "http://127.0.0.1:11434/v1" } }),
    );
    const res = await svc(home, ["gateway", "setup", "--enable", "--non-interactive"]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(WARNING);
    expect(res.stdout).toContain("Start the gateway with: svc gateway start");
  });

  it("says nothing of it for a loopback host, the embedded default, or the adapter turned off", async () => {
    home = tempHome();
    expect((await svc(home, ["gateway", "setup", "--non-interactive"])).stderr).not.toContain(
      "every network interface",
    );
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1" } } }));
    expect((await svc(home, ["gateway", "setup", "--non-interactive"])).stderr).not.toContain(
      "every network interface",
    );
    home.write(
      "config.yaml",
      stringify({ platforms: { webhook: { enabled: true } }, mcp_servers: { a: { command: "true" } } }),
    );
    expect((await svc(home, ["gateway", "setup", "--disable", "--non-interactive"])).stderr).not.toContain(
      "every network interface",
    );
  });
});
