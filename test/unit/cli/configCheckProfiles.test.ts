import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkConfig } from "../../../src/cli/config/check.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

const config = [
  "gateway: { multiplex_profiles: true }",
  "platforms:",
  "  webhook:",
  "    enabled: true",
  "    host: 127.0.0.1",
  "    routes:",
  "      notes: { secret: s, profile: work }",
  "      plain: { secret: s }",
  "mcp_servers:",
  '  docs: { url: "https://docs.test/mcp", headers: { Authorization: "Bearer $' + '{DOCS_TOKEN}" } }',
  "",
].join("\n");

/**
 * A run of a route bound to a named profile connects to the MCP servers with that profile's own `.env`:
 * svc config check looked only at the default profile's, so a variable set there but not in
 * profiles/<name>/.env, or a line of that file that sets nothing, passed as ok while every connect of
 * that profile's runs failed.
 */
describe("svc config check: a named profile's .env", () => {
  it("names the variables a bound profile's runs do not get and a line of its .env that sets nothing", async () => {
    home = tempHome();
    home.write("config.yaml", config, 0o600);
    home.write(".env", "DOCS_TOKEN=default-token\n", 0o600);
    const workEnv = home.write("profiles/work/.env", "export DOCS_TOKEN work-token\n", 0o600);
    home.write("profiles/idle/.env", "OTHER=1\n", 0o600);
    const report = await checkConfig({ home: home.dir, env: {} });
    expect(report.problems).toEqual([]);
    expect(report.warnings).toEqual([
      `${workEnv}: line 1: not a NAME=value line — write DOCS_TOKEN=<value>, or start the line with # to keep it as a comment (profile work's MCP connections read this file)`,
      `${home.dir}/config.yaml: mcp_servers.docs: $` +
        `{DOCS_TOKEN} is not set for profile work, whose runs connect with its own .env — add DOCS_TOKEN=... to ${workEnv} or the environment`,
    ]);
    // No secret value is quoted.
    expect(report.warnings.join("\n")).not.toContain("work-token");

    home.write("profiles/work/.env", "DOCS_TOKEN=work-token\n", 0o600);
    expect((await checkConfig({ home: home.dir, env: {} })).warnings).toEqual([]);
  });

  it("an env: reference with its name left out is quoted as written, and asked for its name, for the default profile and a bound one", async () => {
    home = tempHome();
    home.write("config.yaml", config.replace("Bearer $" + "{DOCS_TOKEN}", "$" + "{env:}"), 0o600);
    const workEnv = home.write("profiles/work/.env", "OTHER=1\n", 0o600);
    const { warnings } = await checkConfig({ home: home.dir, env: {} });
    const written = "$" + "{env:}";
    expect(warnings).toEqual([
      `${home.dir}/config.yaml: mcp_servers.docs: ${written} is not set — write $` +
        `{NAME} in place of ${written} (it names no variable) and add NAME=... to ${home.dir}/.env or the environment`,
      `${home.dir}/config.yaml: mcp_servers.docs: ${written} is not set for profile work, whose runs connect with its own .env — write $` +
        `{NAME} in place of ${written} (it names no variable) and add NAME=... to ${workEnv} or the environment`,
    ]);
  });

  it("a profile no route, subscription or cron job is bound to is not asked for the variables", async () => {
    home = tempHome();
    home.write("config.yaml", config.replace(", profile: work", ""), 0o600);
    home.write(".env", "DOCS_TOKEN=default-token\n", 0o600);
    home.write("profiles/work/.env", "", 0o600);
    expect((await checkConfig({ home: home.dir, env: {} })).warnings).toEqual([]);
  });

  it("a config.yaml or subscription store under a profile's directory is named as not read", async () => {
    home = tempHome();
    home.write("config.yaml", config, 0o600);
    home.write(".env", "DOCS_TOKEN=default-token\n", 0o600);
    home.write("profiles/work/.env", "DOCS_TOKEN=work-token\n", 0o600);
    const own = home.write("profiles/work/config.yaml", "platforms: {}\n");
    const subs = home.write("profiles/work/webhook_subscriptions.json", "{}", 0o600);
    expect((await checkConfig({ home: home.dir, env: {} })).warnings).toEqual([
      `${own} is not read: one ${home.dir}/config.yaml serves every profile — move its routes there, bound with profile: work`,
      `${subs} is not read: one ${home.dir}/webhook_subscriptions.json holds every profile's subscriptions — create them with svc webhook subscribe <name> --route-profile work`,
    ]);
  });

  it("WEBHOOK_SECRET (or another WEBHOOK_* variable) in a profile's .env is named as not read", async () => {
    home = tempHome();
    home.write("config.yaml", config, 0o600);
    home.write(".env", "DOCS_TOKEN=default-token\n", 0o600);
    const workEnv = home.write(
      "profiles/work/.env",
      "DOCS_TOKEN=work-token\nWEBHOOK_SECRET=work-secret\nWEBHOOK_PORT=9000\n",
      0o600,
    );
    const { warnings } = await checkConfig({ home: home.dir, env: {} });
    expect(warnings).toEqual([
      `${workEnv}: WEBHOOK_SECRET, WEBHOOK_PORT are not read here — the webhook adapter reads WEBHOOK_* from ${home.dir}/.env (or the environment) for every profile; a profile's .env serves only its MCP connections: move them there, or give profile work's routes a secret: of their own in config.yaml`,
    ]);
    expect(warnings.join("\n")).not.toContain("work-secret");
  });

  it("a profile link to nothing is named, as the gateway's start names it", async () => {
    home = tempHome();
    home.write("config.yaml", config, 0o600);
    home.write(".env", "DOCS_TOKEN=default-token\n", 0o600);
    home.write("profiles/.keep", "");
    symlinkSync(join(home.dir, "dotfiles/work"), join(home.dir, "profiles/work"));
    const { warnings } = await checkConfig({ home: home.dir, env: {} });
    expect(warnings).toContain(
      `${home.dir}/profiles/work: a symbolic link to ${home.dir}/dotfiles/work, which is not a directory (missing or moved) — profile work's runs, cron jobs and MCP logins cannot use it: restore the directory it points to, or remove the link`,
    );
  });

  /**
   * The gateway answers an event of a cron_job route whose profile's directory is a link to nothing (or a
   * file) 503 "Cron job store cannot be read, retry later": its warning said the job did not exist and every
   * event was dropped, since the store read through the link is empty.
   */
  it.each([
    [
      "a link to nothing",
      (dir: string) => symlinkSync(join(dir, "dotfiles/work"), join(dir, "profiles/work")),
    ],
    ["a file", (dir: string) => writeFileSync(join(dir, "profiles/work"), "")],
  ])(
    "a cron_job route or subscription of a profile whose directory is %s is said answered 503, not its job missing",
    async (_, make) => {
      home = tempHome();
      home.write(
        "config.yaml",
        config.replace(
          "notes: { secret: s, profile: work }",
          "notes: { secret: s, profile: work, cron_job: tick }",
        ),
        0o600,
      );
      home.write(".env", "DOCS_TOKEN=default-token\n", 0o600);
      home.write(
        "webhook_subscriptions.json",
        JSON.stringify({ sub: { secret: "abc", cron_job: "tick", profile: "work" } }),
        0o600,
      );
      mkdirSync(join(home.dir, "profiles"));
      make(home.dir);
      const { warnings } = await checkConfig({ home: home.dir, env: {} });
      const cron = warnings.filter((w) => w.includes(".cron_job: tick"));
      expect(cron).toHaveLength(2);
      for (const warning of cron) {
        expect(warning).toContain(
          `— ${home.dir}/profiles/work/cron/jobs.json cannot be read: ${home.dir}/profiles/work`,
        );
        expect(warning).toContain("profile work's runs, cron jobs and MCP logins cannot use it");
        expect(warning).toMatch(
          /; until then every event on this route is answered 503 \(the sender retries\)$/,
        );
        expect(warning).not.toContain("no such job");
      }
    },
  );

  /**
   * The same for a profile's `cron` directory that is a link to nothing, the default profile's too: the store
   * read through it is empty, so its routes were said to name a job that does not exist and drop every event.
   */
  it.each([
    ["the default profile", undefined],
    ["a named profile", "work"],
  ])(
    "a cron_job route or subscription of %s whose cron directory is a link to nothing is said answered 503, not its job missing",
    async (_, profile) => {
      home = tempHome();
      const bound = profile === undefined ? "" : `, profile: ${profile}`;
      home.write(
        "config.yaml",
        config.replace("notes: { secret: s, profile: work }", `notes: { secret: s${bound}, cron_job: tick }`),
        0o600,
      );
      home.write(".env", "DOCS_TOKEN=default-token\n", 0o600);
      home.write(
        "webhook_subscriptions.json",
        JSON.stringify({
          sub: { secret: "abc", cron_job: "tick", ...(profile === undefined ? {} : { profile }) },
        }),
        0o600,
      );
      const root = profile === undefined ? home.dir : join(home.dir, "profiles", profile);
      mkdirSync(root, { recursive: true });
      symlinkSync(join(home.dir, "dotfiles/cron"), join(root, "cron"));
      const { warnings } = await checkConfig({ home: home.dir, env: {} });
      const cron = warnings.filter((w) => w.includes(".cron_job: tick"));
      expect(cron).toHaveLength(2);
      const whose = profile === undefined ? "the default profile's" : `profile ${profile}'s`;
      for (const warning of cron)
        expect(warning).toMatch(
          new RegExp(
            `\\.cron_job: tick — ${root}/cron/jobs\\.json cannot be read: ${root}/cron: a symbolic link to ${home.dir}/dotfiles/cron, which is not a directory \\(missing or moved\\) — ${whose} cron jobs cannot be kept there: restore the directory it points to, or remove the link \\(svc makes the directory\\); until then every event on this route is answered 503 \\(the sender retries\\)$`,
          ),
        );
    },
  );

  it("names WEBHOOK_SECRET there also when another line of that .env sets nothing (dotenv reads the rest)", async () => {
    home = tempHome();
    home.write("config.yaml", config, 0o600);
    home.write(".env", "DOCS_TOKEN=default-token\n", 0o600);
    const workEnv = home.write(
      "profiles/work/.env",
      "DOCS_TOKEN=work-token\nWEBHOOK_SECRET=work-secret\nbad line\n",
      0o600,
    );
    const { warnings } = await checkConfig({ home: home.dir, env: {} });
    expect(warnings).toEqual([
      `${workEnv}: line 3: not a NAME=value line — write bad=<value>, or start the line with # to keep it as a comment (profile work's MCP connections read this file)`,
      `${workEnv}: WEBHOOK_SECRET is not read here — the webhook adapter reads WEBHOOK_* from ${home.dir}/.env (or the environment) for every profile; a profile's .env serves only its MCP connections: move it there, or give profile work's routes a secret: of their own in config.yaml`,
    ]);
    expect(warnings.join("\n")).not.toContain("work-secret");
  });

  /**
   * A named profile's `.env` that cannot be read was named twice (the file's problem, then again for the
   * variables its MCP connections need), or — a directory — only there, and not at the gateway's start.
   */
  it.each([
    [
      "a directory",
      (dir: string) => mkdirSync(join(dir, "profiles/work/.env"), { recursive: true }),
      "cannot be read (EISDIR",
    ],
    [
      "a link to nothing",
      (dir: string) => {
        mkdirSync(join(dir, "profiles/work"), { recursive: true });
        symlinkSync(join(dir, "gone.env"), join(dir, "profiles/work/.env"));
      },
      `is a symbolic link to `,
    ],
    [
      "UTF-16 (PowerShell's >)",
      (dir: string) => {
        mkdirSync(join(dir, "profiles/work"), { recursive: true });
        writeFileSync(join(dir, "profiles/work/.env"), Buffer.from("\uFEFFDOCS_TOKEN=t\n", "utf16le"), {
          mode: 0o600,
        });
      },
      "UTF-16",
    ],
  ])("a bound profile's .env that is %s is named once", async (_, make, words) => {
    home = tempHome();
    home.write("config.yaml", config, 0o600);
    home.write(".env", "DOCS_TOKEN=default-token\n", 0o600);
    make(home.dir);
    const workEnv = join(home.dir, "profiles/work/.env");
    const { problems, warnings } = await checkConfig({ home: home.dir, env: {} });
    expect(problems).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(new RegExp(`^${workEnv}: `));
    expect(warnings[0]).toContain(words);
    expect(warnings[0]).toMatch(/\(profile work's MCP connections read this file\)$/);
  });
});
