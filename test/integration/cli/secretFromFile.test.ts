import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readEnvFile } from "../../../src/config/envFile.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc, svcEach } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const storedSecret = (name: string): unknown =>
  (
    JSON.parse(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8")) as Record<
      string,
      { secret?: unknown }
    >
  )[name]?.secret;

const WEBHOOK_ON = "platforms:\n  webhook:\n    enabled: true\n";

describe("a secret given as --secret-file <path> or --secret - (stdin), so it is not on the command line", {
  timeout: 90_000,
}, () => {
  it("webhook subscribe and gateway setup read it from the file, without its final line break", async () => {
    home = tempHome();
    home.write("config.yaml", WEBHOOK_ON);
    home.write("gh.secret", "s3cr3t-from-file\n");
    home.write("global.secret", "gl0bal-from-file\r\n");
    const [subscribed, setup] = await svcEach(home, [
      ["webhook", "subscribe", "gh", "--secret-file", join(home.dir, "gh.secret")],
      ["gateway", "setup", "--non-interactive", "--secret-file", join(home.dir, "global.secret")],
    ]);
    expect(subscribed.code).toBe(0);
    expect(storedSecret("gh")).toBe("s3cr3t-from-file");
    expect(setup.code).toBe(0);
    expect(readEnvFile(join(home.dir, ".env")).WEBHOOK_SECRET).toBe("gl0bal-from-file");
    expect(setup.stdout).not.toContain("gl0bal-from-file");
  });

  it("--secret - reads it from stdin (gateway setup reads it the same way)", async () => {
    home = tempHome();
    home.write("config.yaml", WEBHOOK_ON);
    const subscribed = await svc(home, ["webhook", "subscribe", "gh", "--secret", "-"], {
      input: "piped-s3cr3t\n",
    });
    expect(subscribed.code).toBe(0);
    expect(storedSecret("gh")).toBe("piped-s3cr3t");
  });

  it("a missing, empty or unreadable file, or both options, is refused (exit 2) saying what to do, writing nothing", async () => {
    home = tempHome();
    home.write("config.yaml", WEBHOOK_ON);
    home.write("empty.secret", "\n");
    home.write("twolines.secret", "abc\ndef\n");
    const missing = join(home.dir, "missing.secret");
    const [gone, empty, both, twoLines, generated, tilde] = await svcEach(home, [
      ["webhook", "subscribe", "gh", "--secret-file", missing],
      ["webhook", "subscribe", "gh", "--secret-file", join(home.dir, "empty.secret")],
      ["gateway", "setup", "--non-interactive", "--secret", "x", "--secret-file", missing],
      ["webhook", "subscribe", "gh", "--secret-file", join(home.dir, "twolines.secret")],
      ["gateway", "setup", "--non-interactive", "--secret-file", missing, "--generate-secret"],
      // `--secret-file=~/gh.secret`: the shell left the ~ as it is.
      ["webhook", "subscribe", "gh", "--secret-file=~/gh.secret"],
    ]);
    expect(tilde.code).toBe(2);
    expect(tilde.stderr).toContain(
      "--secret-file ~/gh.secret: no such file: the shell does not expand a ~ written after = (--secret-file=~/...) — write --secret-file ~/gh.secret with a space, or $HOME in place of ~",
    );
    // Named as given, not as --secret.
    expect(generated.code).toBe(2);
    expect(generated.stderr).toContain("--secret-file and --generate-secret cannot be combined");
    expect(gone.code).toBe(2);
    expect(gone.stderr).toContain(
      `--secret-file ${missing}: no such file — give the path of a file holding the secret`,
    );
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain(
      `--secret-file ${join(home.dir, "empty.secret")}: the file is empty — write the secret into it`,
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--secret and --secret-file cannot be combined — give the secret one way");
    // The file's other lines are no part of a secret: refused as a line break inside it is, naming the file.
    expect(twoLines.code).toBe(2);
    expect(twoLines.stderr).toContain(
      `--secret-file ${join(home.dir, "twolines.secret")}: must not contain a line break, tab or other control character`,
    );
    expect(twoLines.stderr).not.toContain("abc");
    if (process.getuid?.() !== 0) {
      home.write("locked.secret", "abc\n");
      chmodSync(join(home.dir, "locked.secret"), 0o000);
      const locked = await svc(home, [
        "webhook",
        "subscribe",
        "gh",
        "--secret-file",
        join(home.dir, "locked.secret"),
      ]);
      expect(locked.code).toBe(2);
      expect(locked.stderr).toContain("permission denied");
    }
    expect(existsSync(join(home.dir, "webhook_subscriptions.json"))).toBe(false);
    expect(existsSync(join(home.dir, ".env"))).toBe(false);
  });

  it("a secret read from the file is checked naming the file, never as --secret, and never printed", async () => {
    home = tempHome();
    home.write("config.yaml", WEBHOOK_ON);
    const blank = home.write("blank.secret", "   \n");
    const key = home.write("key.secret", "whpk_not-a-key\n");
    const spaced = home.write("spaced.secret", "sp4ced-s3cret \n");
    const tabbed = home.write("tabbed.secret", "t4b\ts3cret\n");
    const [blankOut, keyOut, spacedOut, setupOut] = await svcEach(home, [
      ["webhook", "subscribe", "gh", "--secret-file", blank],
      ["webhook", "subscribe", "gh", "--secret-file", key],
      ["webhook", "subscribe", "sp", "--secret-file", spaced],
      ["gateway", "setup", "--non-interactive", "--secret-file", tabbed],
    ]);
    expect(blankOut).toMatchObject({ code: 2 });
    expect(blankOut.stderr).toContain(
      `--secret-file ${blank}: only white space — write the secret into the file`,
    );
    expect(keyOut).toMatchObject({ code: 2 });
    expect(keyOut.stderr).toContain(`--secret-file ${key} starts with whpk_`);
    expect(keyOut.stderr).not.toContain("not-a-key");
    // Taken, with a warning that names where it came from.
    expect(spacedOut.code).toBe(0);
    expect(spacedOut.stderr).toContain(
      `Warning: sp: the secret of --secret-file ${spaced} begins or ends with a space`,
    );
    expect(setupOut).toMatchObject({ code: 2 });
    expect(setupOut.stderr).toContain(`--secret-file ${tabbed}: `);
    for (const out of [blankOut, keyOut, spacedOut, setupOut]) expect(out.stderr).not.toMatch(/--secret[ :]/);
    expect(setupOut.stderr + setupOut.stdout).not.toContain("s3cret");
  });
});
