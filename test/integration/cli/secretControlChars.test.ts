import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc, svcEach } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("a secret with a line break or tab (pasted along with it) is refused; a description with one is listed on one line", {
  timeout: 90_000,
}, () => {
  it("webhook subscribe --secret and gateway setup --secret refuse it (exit 2), writing nothing", async () => {
    home = tempHome();
    const [subscribed, setup, tab] = await svcEach(home, [
      ["webhook", "subscribe", "gh", "--secret", "abc\ndef"],
      ["gateway", "setup", "--non-interactive", "--secret", "abc\r\n"],
      ["webhook", "subscribe", "gh", "--secret", "abc\tdef"],
    ]);
    for (const res of [subscribed, setup, tab]) {
      expect(res.code).toBe(2);
      expect(res.stderr).toContain("--secret: must not contain a line break, tab or other control character");
    }
    expect(existsSync(join(home.dir, "webhook_subscriptions.json"))).toBe(false);
    expect(existsSync(join(home.dir, ".env"))).toBe(false);
  });

  it("webhook subscribe --secret '${GH_SECRET}' (quoted away from the shell) is kept as written, with a warning; config check names it", async () => {
    home = tempHome();
    const res = await svc(home, ["webhook", "subscribe", "gh", "--secret", "${GH_SECRET}"]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(
      "Warning: gh: the --secret is written as a variable (${NAME} or $NAME), but a subscription's values are taken as written",
    );
    const check = await svc(home, ["config", "check"]);
    expect(check.stderr).toContain(
      `Warning: ${join(home.dir, "webhook_subscriptions.json")}: gh.secret is written as a variable`,
    );
    expect(check.stderr).toContain('store the secret itself: svc webhook subscribe gh --secret "$NAME"');
  });

  it("insecure_no_auth in lower case is kept as a real secret, with a warning; config check names it for a subscription and a config.yaml route", async () => {
    home = tempHome();
    const res = await svc(home, ["webhook", "subscribe", "gh", "--secret", "insecure_no_auth"]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(
      'Warning: gh: the --secret is "insecure_no_auth", which is not INSECURE_NO_AUTH (the value that turns the signature check off is written exactly so, in capitals): it is taken as a real secret',
    );
    expect(res.stderr).not.toContain("No signature is checked");
    home.write(
      "config.yaml",
      "platforms:\n  webhook:\n    enabled: true\n    routes:\n      ci:\n        secret: Insecure_No_Auth\n",
    );
    const check = await svc(home, ["config", "check"]);
    expect(check.stderr).toContain(
      `Warning: ${join(home.dir, "webhook_subscriptions.json")}: gh.secret is "insecure_no_auth", which is not INSECURE_NO_AUTH`,
    );
    expect(check.stderr).toContain(
      'platforms.webhook.routes.ci.secret is "Insecure_No_Auth", which is not INSECURE_NO_AUTH',
    );
  });

  it("webhook subscribe --secret whpk_ that is no 32-byte key is refused (exit 2); config check names such a record", async () => {
    home = tempHome();
    const res = await svc(home, ["webhook", "subscribe", "sw", "--secret", "whpk_abc"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      "--secret starts with whpk_ (a Standard Webhooks public key) but the rest is not the base64 of a 32-byte Ed25519 key",
    );
    expect(existsSync(join(home.dir, "webhook_subscriptions.json"))).toBe(false);
    home.write("webhook_subscriptions.json", JSON.stringify({ sw: { secret: "whpk_abc" } }), 0o600);
    const check = await svc(home, ["config", "check"]);
    expect(check.stderr).toContain(
      `Warning: ${join(home.dir, "webhook_subscriptions.json")}: sw.secret starts with whpk_`,
    );
  });

  it("webhook subscribe --secret whsec_ whose rest is no base64 is kept (Stripe keys with the whole text) with a warning; config check names it", async () => {
    home = tempHome();
    const res = await svc(home, ["webhook", "subscribe", "svix", "--secret", "whsec_MfKQ9r8GKYqr-TwjUPD8"]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(
      "Warning: svix: the --secret starts with whsec_ (a Standard Webhooks or Svix signing secret) but the rest is not base64, so no Standard Webhooks or Svix signature verifies with it",
    );
    const check = await svc(home, ["config", "check"]);
    expect(check.stderr).toContain(
      `Warning: ${join(home.dir, "webhook_subscriptions.json")}: svix.secret starts with whsec_ (a Standard Webhooks or Svix signing secret) but the rest is not base64`,
    );
    expect(`${res.stderr}${check.stderr}`).not.toContain("MfKQ9r8GKYqr");
  });

  it("webhook subscribe --secret with an edge space or non-ASCII is kept (HMAC works) with a warning that tokens never match", async () => {
    home = tempHome();
    const created = await svc(home, ["webhook", "subscribe", "gh"]);
    const spaced = await svc(home, ["webhook", "subscribe", "gh", "--secret", " abc"]);
    expect(spaced.code).toBe(0);
    expect(spaced.stderr).toContain(
      "Warning: gh: the --secret begins or ends with a space, which HTTP strips from a header's value, so a sender that sends the secret itself",
    );
    // Chosen, not rotated: the line says where the new secret came from.
    expect(spaced.stdout).toContain("The secret changed (set with --secret)");
    expect(created.stdout).not.toContain("The secret changed");
    const accented = await svc(home, ["webhook", "subscribe", "gh", "--secret", "sécret"]);
    expect(accented.stderr).toContain("Warning: gh: the --secret has a character outside printable ASCII");
    const plain = await svc(home, ["webhook", "subscribe", "gh", "--secret", "plain-secret"]);
    expect(plain.stderr).not.toContain("Warning");
  });

  it("interactive setup explains an entered secret with a tab and asks again", async () => {
    home = tempHome();
    const res = await svc(home, ["gateway", "setup"], { input: "y\n\ne\nab\tcd\ngood-secret\n" });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("the secret must not contain a line break, tab or other control character");
    expect(readFileSync(join(home.dir, ".env"), "utf8")).toContain("WEBHOOK_SECRET=good-secret\n");
  });

  it("list shows a description hand-written with a line break on its row (subscribe refuses one)", async () => {
    home = tempHome();
    const refused = await svc(home, ["webhook", "subscribe", "gh", "--description", "line one\nline two"]);
    expect(refused.code).toBe(2);
    expect(existsSync(join(home.dir, "webhook_subscriptions.json"))).toBe(false);
    home.write(
      "webhook_subscriptions.json",
      JSON.stringify({ gh: { secret: "abc", prompt: "p", description: "line one\nline two" } }),
      0o600,
    );
    const list = await svc(home, ["webhook", "list"]);
    expect(list.stdout.trimEnd().split("\n")).toHaveLength(2);
    expect(list.stdout).toMatch(/^gh .* line one line two$/m);
  });
});
