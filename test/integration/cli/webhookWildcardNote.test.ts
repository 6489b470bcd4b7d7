import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("svc webhook subscribe on a wildcard bind", { timeout: 90_000 }, () => {
  it("says the 127.0.0.1 URL is for this machine only (a config.yaml without host binds 0.0.0.0); no note on loopback", async () => {
    home = tempHome();
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true } } }));
    const wildcard = await svc(home, ["webhook", "subscribe", "a"]);
    expect(wildcard.stdout).toContain("URL:    http://127.0.0.1:8644/webhooks/a\n");
    expect(wildcard.stderr).toContain(
      "Note: the gateway listens on every interface (0.0.0.0); the URL shows 127.0.0.1 — a sender on another machine uses this machine's address or name in its place",
    );
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1" } } }));
    expect((await svc(home, ["webhook", "subscribe", "b"])).stderr).toBe("");
  });
});
