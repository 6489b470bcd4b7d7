import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { createFakeGh } from "../../fakes/fakeGh.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
const cleanups: Array<() => void> = [];
afterEach(() => {
  home.cleanup();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

// docs/delivery-targets.md's forge_comment example, without the optional platforms.forge_comment section.
const prReview = (forgeComment?: Record<string, unknown>) =>
  stringify({
    platforms: {
      ...(forgeComment === undefined ? {} : { forge_comment: forgeComment }),
      webhook: {
        enabled: true,
        host: "127.0.0.1",
        routes: {
          "pr-review": {
            secret: "s3cret",
            deliver: "forge_comment",
            deliver_extra: { repo: "{repository.full_name}", pr_number: "{pull_request.number}" },
          },
        },
      },
    },
  });

/** A PATH of one empty directory: no gh on it. */
function pathWithoutGh(): string {
  const dir = mkdtempSync(join(tmpdir(), "svc-no-gh-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe("svc config check: the gh a forge_comment route comments with", () => {
  it("warns when gh is not on PATH, naming the routes and the fix; the check still passes", async () => {
    home = tempHome();
    home.write("config.yaml", prReview());
    const res = await svc(home, ["config", "check"], { env: { PATH: pathWithoutGh() } });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(
      `Warning: ${join(home.dir, "config.yaml")}: platforms.forge_comment.command: "gh" was not found on PATH — route pr-review delivers to forge_comment, and every pull-request comment fails until it can be started: install the GitHub CLI and run "gh auth login", or set platforms.forge_comment.command to where gh is`,
    );
  });

  it("names a command path to nothing with its own fix, also for enabled: true without a route", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: {
          forge_comment: { enabled: true, command: "/opt/nowhere/gh" },
          webhook: { enabled: true, host: "127.0.0.1" },
        },
      }),
    );
    const res = await svc(home, ["config", "check"]);
    expect(res.stderr).toContain(
      'platforms.forge_comment.command: "/opt/nowhere/gh" does not exist — platforms.forge_comment is enabled, and every pull-request comment fails until it can be started: set platforms.forge_comment.command to the gh executable',
    );
  });

  it("counts a subscription that delivers to forge_comment as a config.yaml route", async () => {
    home = tempHome();
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1" } } }));
    const noGh = pathWithoutGh();
    const subscribed = await svc(
      home,
      [
        "webhook",
        "subscribe",
        "pr",
        "--deliver",
        "forge_comment",
        "--deliver-extra",
        "repo=o/r",
        "--deliver-extra",
        "pr_number={number}",
      ],
      { env: { PATH: noGh } },
    );
    expect(subscribed.code).toBe(0);
    // svc webhook subscribe says so as it saves the subscription.
    expect(subscribed.stderr).toContain(
      "Warning: " +
        join(home.dir, "config.yaml") +
        ': platforms.forge_comment.command: "gh" was not found on PATH — route pr delivers to forge_comment',
    );
    const res = await svc(home, ["config", "check"], { env: { PATH: noGh } });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(
      'platforms.forge_comment.command: "gh" was not found on PATH — route pr delivers to forge_comment, and every pull-request comment fails',
    );
  });

  it(`names a command a $\{VAR} gave (.env or the environment) as config.yaml writes it, never its value`, async () => {
    home = tempHome();
    home.write("config.yaml", prReview({ command: `$\{GHX}` }));
    const file = join(home.dir, "config.yaml");
    const notFound = `Warning: ${file}: platforms.forge_comment.command: "$\{GHX}" (the value it gives is not shown) was not found on PATH — route pr-review delivers to forge_comment`;
    home.write(".env", "GHX=SECRETV-GH\n", 0o600);
    const fromEnvFile = await svc(home, ["config", "check"], { env: { PATH: pathWithoutGh() } });
    expect(fromEnvFile.stderr).toContain(notFound);
    expect(fromEnvFile.stdout + fromEnvFile.stderr).not.toContain("SECRETV");
    home.write(".env", "", 0o600);
    const fromEnv = await svc(home, ["config", "check"], {
      env: { PATH: pathWithoutGh(), GHX: "SECRETV-GH" },
    });
    expect(fromEnv.stderr).toContain(notFound);
    expect(fromEnv.stdout + fromEnv.stderr).not.toContain("SECRETV");
  });

  it("says nothing when gh is on PATH, or forge_comment is turned off", async () => {
    home = tempHome();
    home.write("config.yaml", prReview());
    const gh = createFakeGh();
    cleanups.push(() => gh.cleanup());
    expect((await svc(home, ["config", "check"], { env: { PATH: gh.path } })).stderr).not.toContain(
      "forge_comment.command",
    );
    home.write("config.yaml", prReview({ enabled: false }));
    expect((await svc(home, ["config", "check"], { env: { PATH: pathWithoutGh() } })).stderr).not.toContain(
      "forge_comment.command",
    );
  });
});
