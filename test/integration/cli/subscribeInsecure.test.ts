import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const bound = (host: string) => stringify({ platforms: { webhook: { enabled: true, host } } });

describe("svc webhook subscribe --secret INSECURE_NO_AUTH (spec 2.2 rule 5)", { timeout: 90_000 }, () => {
  it("is refused when the gateway binds to a non-loopback host, naming the file, the host and the fix", async () => {
    home = tempHome();
    home.write("config.yaml", bound("0.0.0.0"));
    const res = await svc(home, ["webhook", "subscribe", "open", "--secret", "INSECURE_NO_AUTH"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `open: --secret INSECURE_NO_AUTH is only allowed when the gateway binds to loopback (127.0.0.1, localhost, ::1), but platforms.webhook.host is 0.0.0.0 (${join(home.dir, "config.yaml")}) — use a real secret, or bind to 127.0.0.1`,
    );
    expect(existsSync(join(home.dir, "webhook_subscriptions.json"))).toBe(false);
  });

  it("with host left out of config.yaml, says it is not set there and 0.0.0.0 is its default (no line to look for)", async () => {
    home = tempHome();
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true } } }));
    const config = join(home.dir, "config.yaml");
    const res = await svc(home, ["webhook", "subscribe", "open", "--secret", "INSECURE_NO_AUTH"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `but platforms.webhook.host is not set in ${config}, and 0.0.0.0 is its default — use a real secret, or bind to 127.0.0.1`,
    );
    // A record written by hand is named the same way by list's note.
    home.write("webhook_subscriptions.json", JSON.stringify({ open: { secret: "INSECURE_NO_AUTH" } }), 0o600);
    const list = await svc(home, ["webhook", "list"]);
    expect(list.stderr).toContain(
      `served only on a loopback bind, but platforms.webhook.host is not set in ${config}, and 0.0.0.0 is its default`,
    );
  });

  it("names the host as written under platforms.webhook.extra, whose value wins over a loopback host written directly", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1", extra: { host: "0.0.0.0" } } } }),
    );
    const res = await svc(home, ["webhook", "subscribe", "open", "--secret", "INSECURE_NO_AUTH"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `but platforms.webhook.extra.host is 0.0.0.0 (${join(home.dir, "config.yaml")}) — use a real secret, or bind to 127.0.0.1`,
    );
  });

  it("is accepted on a loopback bind", async () => {
    home = tempHome();
    home.write("config.yaml", bound("localhost"));
    const res = await svc(home, ["webhook", "subscribe", "open", "--secret", "INSECURE_NO_AUTH"]);
    expect(res).toMatchObject({ code: 0, stdout: expect.stringContaining("Secret: INSECURE_NO_AUTH") });
    // No signing instructions for a route that checks no signature.
    expect(res.stdout).toContain("No signature is checked (INSECURE_NO_AUTH)");
    expect(res.stdout).not.toContain("Sign requests with");
  });
});
