import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { signGenericV2 } from "../../../src/cli/webhook.js";
import { readEnvFile } from "../../../src/config/envFile.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "./svc.js";

let home: TempHome;
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  home.cleanup();
});

const envText = () => readFileSync(join(home.dir, ".env"), "utf8");

/** A gateway started with the .env setup wrote: the status of a request to its route signed with `secret`. */
async function statusSignedWith(secret: string): Promise<number> {
  gw = await startTestGateway({
    config: webhookConfig({ global: { prompt: "x" } }),
    files: { ".env": envText() },
  });
  const body = JSON.stringify({ event_type: "push" });
  const signed = await postJson(
    gw.url("/webhooks/global"),
    body,
    signGenericV2(secret, body, Math.floor(Date.now() / 1000)),
  );
  return signed.status;
}

describe("svc gateway setup: the global secret the gateway uses is the one it printed", {
  timeout: 90_000,
}, () => {
  it("a --secret with spaces, quotes, # and a backslash reaches the gateway unchanged through .env", async () => {
    home = tempHome();
    const secret = `it's a "secret" #1 \\n`;
    const res = await svc(home, ["gateway", "setup", "--non-interactive", "--secret", secret]);
    expect(res.code).toBe(0);
    // Not echoed back: the user knows it, and terminal scrollback or CI logs need not.
    expect(res.stdout).toContain("Global webhook secret: the one you gave (saved as WEBHOOK_SECRET in ");
    expect(res.stdout).not.toContain(secret);
    expect(await statusSignedWith(secret)).toBe(202);
  });

  it("a --secret with a space at an end or a character outside printable ASCII is kept with a warning (a token header can never carry it), as svc webhook subscribe warns", async () => {
    home = tempHome();
    for (const secret of [" padded-secret-QQQ ", "naïve-secret-QQQ"]) {
      const res = await svc(home, ["gateway", "setup", "--non-interactive", "--secret", secret]);
      expect(res.code).toBe(0);
      expect(res.stderr).toMatch(
        /^Warning: the --secret (begins or ends with a space|has a character outside printable ASCII).*X-Gitlab-Token.*--generate-secret/m,
      );
      expect(res.stderr).not.toContain(secret.trim());
    }
    const plain = await svc(home, ["gateway", "setup", "--non-interactive", "--secret", "plain-secret-QQQ"]);
    expect(plain.stderr).not.toContain("Warning");
    const generated = await svc(home, ["gateway", "setup", "--non-interactive", "--generate-secret"]);
    expect(generated.stderr).not.toContain("Warning");
  });

  it("a --secret holding a variable in braces is saved as written (single quotes in .env, which no variable replaces) and the gateway takes it so: it starts and verifies that text, where it refused the secret as an unset variable", async () => {
    home = tempHome();
    // HOME is set: the refusal said it was not.
    const secret = `lit$\{HOME}text-QQQ`;
    const res = await svc(home, ["gateway", "setup", "--non-interactive", "--secret", secret]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("Start the gateway with: svc gateway start");
    expect(res.stdout).not.toContain("will not start");
    expect(res.stderr).toMatch(/^Warning: the --secret is written as a variable .*--secret "\$NAME"/m);
    expect(res.stderr).not.toContain(secret);
    expect(readEnvFile(join(home.dir, ".env"), process.env).WEBHOOK_SECRET).toBe(secret);
    const check = await svc(home, ["config", "check"]);
    expect(check).toMatchObject({ code: 0, stderr: expect.not.stringContaining("is not set") });
    expect(await statusSignedWith(secret)).toBe(202);
  });

  it("an entered secret with a space at an end is saved as typed, with the warning a --secret gets (it was trimmed without a word)", async () => {
    home = tempHome();
    const secret = " padded-entered-QQQ ";
    // Enable (default), port (default), [e]nter, the secret.
    const res = await svc(home, ["gateway", "setup"], { input: `\n\ne\n${secret}\n` });
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(
      /^Warning: the secret you entered begins or ends with a space.*X-Gitlab-Token.*--generate-secret/m,
    );
    expect(res.stderr).not.toContain(secret.trim());
    expect(readEnvFile(join(home.dir, ".env")).WEBHOOK_SECRET).toBe(secret);
  });

  it("an empty --secret is refused (exit 2); an empty WEBHOOK_SECRET in .env counts as none, so one is generated", async () => {
    home = tempHome();
    const empty = await svc(home, ["gateway", "setup", "--non-interactive", "--secret", ""]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("--secret");
    home.write(".env", "WEBHOOK_SECRET=\n");
    const res = await svc(home, ["gateway", "setup", "--non-interactive"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^Global webhook secret: [0-9a-f]{64}$/m);
    expect(envText()).toMatch(/^WEBHOOK_SECRET=[0-9a-f]{64}$/m);
  });
});
