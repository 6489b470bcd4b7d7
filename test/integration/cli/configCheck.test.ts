import { chmodSync, renameSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("svc config check: the whole configuration, nothing started", { timeout: 60_000 }, () => {
  it("prints ok and a one-line summary for a valid configuration", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: {
          webhook: {
            enabled: true,
            host: "127.0.0.1",
            port: 9100,
            routes: { github: { secret: "s3cret", prompt: "x" }, ci: { secret: "t", prompt: "y" } },
          },
        },
        mcp_servers: {
          files: { command: "node", args: ["x.js"] },
          off: { url: "http://127.0.0.1:1/mcp", enabled: false },
        },
      }),
      0o600,
    );
    home.write("webhook_subscriptions.json", JSON.stringify({ gh: { secret: "abc", prompt: "p" } }), 0o600);
    const result = await svc(home, ["config", "check"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^ok: webhook on 127\.0\.0\.1:9100, 2 routes, 1 subscription, 2 MCP servers \(1 enabled\), agent echo, .*config\.yaml\n$/,
    );
  });

  it("a bad WEBHOOK_PORT and a WEBHOOK_SECRET whose ${NAME} nothing set are named in one pass", async () => {
    home = tempHome();
    home.write(".env", "WEBHOOK_PORT=abc\nWEBHOOK_SECRET=${GH}\n", 0o600);
    const result = await svc(home, ["config", "check"]);
    const env = join(home.dir, ".env");
    expect(result.stderr.split("\n").filter(Boolean)).toEqual([
      `${env}: WEBHOOK_PORT: expected a port number (0-65535), got "abc" — write a plain number (WEBHOOK_PORT=8644; 0 picks a free port) there, or remove the line to use platforms.webhook.port`,
      `${env}: WEBHOOK_SECRET: \${GH} is not set — set GH on a line above it in ${env}, or in the environment (or put the value in 'single quotes' to take it as written)`,
    ]);
    expect(result.stdout).toBe("2 problems: the gateway would not start\n");
    expect(result.code).toBe(1);
  });

  it("counts the subscriptions the gateway would not serve apart: disabled, invalid, shadowed by a config.yaml route", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(webhookConfig({ gh: { secret: "s3cret" } })));
    home.write(
      "webhook_subscriptions.json",
      JSON.stringify({
        a: { secret: "abc" },
        off: { secret: "abc", enabled: false },
        bad: { secret: "abc", events: "push" },
        gh: { secret: "abc" },
      }),
      0o600,
    );
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/, 1 route, 4 subscriptions \(1 served\), 0 MCP servers, /);
    expect(result.stderr).toContain("bad.events: expected a list");
  });

  it("with no config.yaml, checks the embedded default, naming where it looked for the file", async () => {
    home = tempHome();
    const result = await svc(home, ["config", "check"]);
    expect(result).toMatchObject({
      code: 0,
      stdout: expect.stringContaining(`embedded default (no ${join(home.dir, "config.yaml")})`),
    });
  });

  it("lists every startup problem and exits 1", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: {
          webhook: {
            enabled: true,
            host: "127.0.0.1",
            routes: { a: { prompt: "x" }, b: { secret: "s", deliver: "slack", prompt: "y" } },
          },
        },
      }),
    );
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("platforms.webhook.routes.a.secret: missing");
    expect(result.stderr).toContain(
      "platforms.webhook.routes.b.deliver: slack needs platforms.slack enabled",
    );
    expect(result.stdout).toBe("2 problems: the gateway would not start\n");
  });

  it("a subscription store that is not valid JSON: a problem, but not one that stops the gateway", async () => {
    home = tempHome();
    home.write("webhook_subscriptions.json", '{\n  "gh": {"secret": "abc",}\n}\n', 0o600);
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^\/.*\/webhook_subscriptions\.json: not valid JSON at line 2, column 26 \(.*\) — fix or remove the file\n$/,
    );
    // The gateway starts with it (logging the error) and serves none of its subscriptions.
    expect(result.stdout).toBe(
      "1 problem: the gateway would start, but serve none of the subscriptions until the store is fixed\n",
    );
  });

  it("warns about a subscription whose cron job or script is not there (removed after it was made), or an unknown toolset", async () => {
    home = tempHome();
    home.write(
      "webhook_subscriptions.json",
      JSON.stringify({
        fire: { secret: "abc ", cron_job: "gone" },
        work: { secret: "abc", cron_job: "gone", profile: "work" },
        scripted: { secret: "abc", script: "nope.py", toolsets: ["terminal", "web_serch"] },
        off: { secret: "abc", cron_job: "gone", enabled: false },
        dup: { secret: "abc" },
        direct: { secret: "abc", deliver: "telegram", deliver_only: true },
        typo: { secret: "abc", deliver: "telegarm" },
        other: { secret: "abc", id: "sub_1", source: "zapier" },
        relay: { secret: "abc", cron_job: "gone", deliver: "chat_1" },
        wild: { secret: "abc", events: ["*"] },
      }),
      0o600,
    );
    home.write("config.yaml", stringify(webhookConfig({ dup: { secret: "static" } })));
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(0);
    const subs = `${home.dir}/webhook_subscriptions.json`;
    expect(result.stderr).toContain(
      `Warning: ${subs}: fire.cron_job: gone — no such job in ${home.dir}/cron/jobs.json (\`svc cron list\`); until it exists`,
    );
    // The list command of that profile's store: plain svc cron list shows the default profile's jobs.
    expect(result.stderr).toContain(
      `Warning: ${subs}: work.cron_job: gone — no such job in ${home.dir}/profiles/work/cron/jobs.json in profile work (\`svc cron list --profile work\`); until it exists`,
    );
    // A profile binding, as the gateway logs it at each load (multiplexing is off here).
    expect(result.stderr).toContain(
      `Warning: ${subs}: work.profile: the binding to profile work is not enforced — gateway.multiplex_profiles is off, so the route answers at /webhooks/work;`,
    );
    expect(result.stderr).toContain(`Warning: ${subs}: scripted.script: nope.py — `);
    // toolsets, edited into the file by hand, get the check a config.yaml route's get.
    expect(result.stderr).toContain(
      `Warning: ${subs}: scripted.toolsets: unknown toolset "web_serch" — did you mean web_search?`,
    );
    expect(result.stderr).not.toContain('"terminal"');
    expect(result.stderr).toContain(`Warning: ${subs}: fire.secret begins or ends with a space`);
    expect(result.stderr).not.toContain("work.secret");
    expect(result.stderr).toContain(
      `Warning: ${subs}: dup is enabled but not served: ${home.dir}/config.yaml has a route of the same name (platforms.webhook.routes.dup), which wins`,
    );
    // Delivery targets: what refuses a config.yaml route at start makes each of these events' delivery fail.
    expect(result.stderr).toContain(
      `Warning: ${subs}: direct.deliver: telegram needs platforms.telegram enabled`,
    );
    expect(result.stderr).toContain(
      `Warning: ${subs}: typo.deliver: unknown target "telegarm" — did you mean "telegram"?`,
    );
    // Keys a record's other keys leave without effect, as for a config.yaml route.
    expect(result.stderr).toContain(
      `Warning: ${subs}: relay: deliver has no effect on a cron_job route — job gone runs with its own target`,
    );
    // An events entry that never matches, as for a config.yaml route.
    expect(result.stderr).toContain(
      `Warning: ${subs}: wild.events[0]: "*" never matches: events compares the exact event type and has no wildcard — leave events out (or empty) to accept every event`,
    );
    // Keys of a record's own are named, as the gateway names them at start.
    expect(result.stderr).toContain(
      `Warning: ${subs}: other: ignoring fields that are not route properties: id, source (the route is served without them)`,
    );
    // A disabled subscription is not served: nothing to warn about.
    expect(result.stderr).not.toContain("off.cron_job");
  });

  it("warns when .env or webhook_subscriptions.json, which hold secrets, are readable by other users", async () => {
    home = tempHome();
    const env = home.write(".env", "WEBHOOK_SECRET=s3cret\n", 0o644);
    const subs = home.write("webhook_subscriptions.json", JSON.stringify({ gh: { secret: "abc" } }), 0o640);
    chmodSync(env, 0o644); // whatever the umask
    chmodSync(subs, 0o640);
    const open = await svc(home, ["config", "check"]);
    expect(open.code).toBe(0);
    expect(open.stderr).toContain(
      `Warning: ${env} holds secrets but is readable by other users (mode 0644) — chmod 600 ${env}`,
    );
    expect(open.stderr).toContain(
      `Warning: ${subs} holds secrets but is readable by other users (mode 0640)`,
    );
    chmodSync(env, 0o600);
    chmodSync(subs, 0o600);
    expect((await svc(home, ["config", "check"])).stderr).toBe("");
  });

  it("reports a schema error and a bad .env line", async () => {
    home = tempHome();
    home.write("config.yaml", "platforms:\n  webhook:\n    port: eighty\n");
    let result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("platforms.webhook.port: expected a number");
    home.write("config.yaml", "platforms: {}\n");
    home.write(".env", "WEBHOOK_SECRET: hush-value\n");
    result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(".env: line 1: not a NAME=value line");
    expect(result.stderr).not.toContain("hush-value");
  });

  it("names the unset variable of an enabled MCP server as a warning", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        mcp_servers: {
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
          gh: { url: "https://example.test/mcp", headers: { Authorization: "Bearer ${GH_TOKEN}" } },
        },
      }),
    );
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(0);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    expect(result.stderr).toContain("mcp_servers.gh: ${GH_TOKEN} is not set — add GH_TOKEN=...");
  });
  it("names a token pasted with the prefix svc adds itself (bot, Bot, Bearer), never the token", async () => {
    home = tempHome();
    home.write(
      ".env",
      "TG_TOKEN=bot123456:AAH-tg-secret\nDISCORD_TOKEN='Bot MTIz.dc-secret'\nSLACK_TOKEN='Bearer xoxb-sl-secret'\n",
      0o600,
    );
    const platform = (variable: string) => ({
      enabled: true,
      token: `\${${variable}}`,
      home_channel: "1",
    });
    home.write(
      "config.yaml",
      stringify(
        webhookConfig(
          { ci: { secret: "s3cret", deliver: "telegram" } },
          {},
          {
            platforms: {
              telegram: platform("TG_TOKEN"),
              discord: platform("DISCORD_TOKEN"),
              slack: platform("SLACK_TOKEN"),
            },
          },
        ),
      ),
      0o600,
    );
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(0);
    const config = join(home.dir, "config.yaml");
    const warnings = result.stderr.split("\n").filter((line) => line.includes(".token: "));
    expect(warnings).toEqual([
      `Warning: ${config}: platforms.telegram.token: starts with "bot" — svc adds the prefix itself (its requests go to /bot<token>/...): write the token without it, as @BotFather gives it (<bot id>:<secret>); as written, Telegram answers every request 404 Not Found`,
      `Warning: ${config}: platforms.discord.token: starts with "Bot " — svc adds the prefix itself (Authorization: Bot <token>): write the token without it; as written, Discord refuses every request (401 Unauthorized)`,
      `Warning: ${config}: platforms.slack.token: starts with "Bearer " — svc adds the prefix itself (Authorization: Bearer <token>): write the token without it; as written, slack refuses every request as unauthorized`,
    ]);
    expect(result.stderr).not.toMatch(/tg-secret|dc-secret|sl-secret/);
  });

  it("prints what the gateway would warn about its routes: a profile binding, a script, a cron job, a secret, a toolset", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify(
        webhookConfig({
          r1: { secret: "sécret", script: "../../etc/passwd", profile: "wrk", toolsets: ["web_serch"] },
          r2: { secret: "abc", cron_job: "nojob" },
        }),
      ),
      0o600,
    );
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(0);
    const config = `${home.dir}/config.yaml`;
    const warnings = result.stderr.split("\n").filter((line) => line.startsWith("Warning: "));
    expect(warnings.map((line) => line.slice(0, line.indexOf(":", `Warning: ${config}: `.length)))).toEqual([
      `Warning: ${config}: platforms.webhook.routes.r1.profile`,
      `Warning: ${config}: platforms.webhook.routes.r1.secret has a character outside printable ASCII, so a sender that sends the secret itself (X-Gitlab-Token, Authorization`,
      `Warning: ${config}: platforms.webhook.routes.r1.toolsets`,
      `Warning: ${config}: platforms.webhook.routes.r1.script`,
      `Warning: ${config}: platforms.webhook.routes.r2.cron_job`,
    ]);
    expect(result.stderr).toContain('unknown toolset "web_serch" — did you mean web_search?');
  });

  it("a .env line whose name is no variable's (a digit first, a . or a -) is named with its line, not refused", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(webhookConfig({ gh: { secret: "route-own-secret-123" } })), 0o600);
    home.write(
      ".env",
      'GOOD=1\n1BAD=one-value\nMULTI="first\nmy-key=inside-a-value\nlast"\napp.name=dot-value\nexport my-key=dash-value\n',
      0o600,
    );
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(0);
    const env = join(home.dir, ".env");
    const named = result.stderr.split("\n").filter((line) => line.includes("is not a variable name"));
    expect(named).toEqual([
      `Warning: ${env}: line 2: 1BAD is not a variable name as a shell reads one (a letter or _ first, then letters, digits and _) — if config.yaml is to use it, rename it _1BAD and write $\{_1BAD} there (svc's checks take a $\{1BAD} left unset for a form svc does not read); a line that only another tool reads may stay`,
      expect.stringContaining(
        `Warning: ${env}: line 6: app.name is not a variable name as a shell reads one`,
      ),
      expect.stringContaining(`Warning: ${env}: line 7: my-key is not a variable name as a shell reads one`),
    ]);
    expect(named[1]).toContain("rename it app_name");
    expect(result.stderr).not.toMatch(/one-value|dot-value|dash-value|inside-a-value/);
  });

  it("a global secret written $NAME that only subscriptions fall back to (every route has its own) is named", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify(webhookConfig({ gh: { secret: "route-own-secret-123" } }, { secret: "$GLOBAL_SEC" })),
      0o600,
    );
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(0);
    const warnings = result.stderr.split("\n").filter((line) => line.startsWith("Warning: "));
    expect(warnings).toEqual([
      expect.stringContaining(
        `Warning: ${home.dir}/config.yaml: platforms.webhook.secret (the global secret or WEBHOOK_SECRET, which overrides it; every subscription without a secret of its own uses it) is a $ followed by a name, as a shell or docker compose writes a variable`,
      ),
    ]);
    expect(result.stderr).not.toContain("GLOBAL_SEC");
    // With the adapter off, no subscription is served: nothing to say.
    home.write(
      "config.yaml",
      stringify(
        webhookConfig({ gh: { secret: "route-own-secret-123" } }, { enabled: false, secret: "$GLOBAL_SEC" }),
      ),
      0o600,
    );
    const off = await svc(home, ["config", "check"]);
    expect(off.stderr).not.toContain("a $ followed by a name");
  });
  it("points a tool's registered name in toolsets (mcp__notes__add) to its server and to tools.include", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify(
        webhookConfig(
          { r: { secret: "abc", toolsets: ["mcp__notes__add"] } },
          {},
          { mcp_servers: { notes: { command: "node", args: ["x.js"] } } },
        ),
      ),
      0o600,
    );
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      `Warning: ${home.dir}/config.yaml: platforms.webhook.routes.r.toolsets: unknown toolset "mcp__notes__add" — did you mean notes? (toolsets name MCP servers; to offer only this tool, list it in mcp_servers.notes.tools.include: [add]); runs of the route drop it, so its runs are offered every enabled MCP server`,
    );
  });
  it("refuses, as the gateway does, a configuration with the adapter off and no MCP servers: nothing to run", async () => {
    home = tempHome();
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: false } } }));
    const result = await svc(home, ["config", "check"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `${home.dir}/config.yaml: platforms.webhook.enabled is false — the webhook adapter is off, no mcp_servers are configured and no cron job is stored, so there is nothing to run.`,
    );
    const run = await svc(home, ["gateway", "run", "--port", "0"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("so there is nothing to run.");
    // A digest that needs no webhook: the other way to give the gateway something to run is named too.
    for (const said of [result.stderr, run.stderr])
      expect(said).toContain(
        "; or, for a gateway without webhooks, store a cron job (svc cron create) or add an MCP server (svc mcp add)",
      );
  });
  it("counts a store behind a cron directory that is a link to nothing as something to run, and names the link as the gateway's scheduler does", async () => {
    home = tempHome();
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: false } } }));
    const create = ["cron", "create", "--name", "triage", "--schedule", "every 30s", "--prompt", "hi"];
    expect((await svc(home, create)).code).toBe(0);
    const cron = join(home.dir, "cron");
    renameSync(cron, join(home.dir, "cron-real"));
    symlinkSync(join(home.dir, "gone"), cron);
    const result = await svc(home, ["config", "check"]);
    // Seen: "… no cron job is stored, so there is nothing to run." (exit 1): its job is only out of reach.
    expect(result.stderr).not.toContain("nothing to run");
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      `Warning: ${cron}: a symbolic link to ${home.dir}/gone, which is not a directory (missing or moved) — the default profile's cron jobs cannot be kept there: restore the directory it points to, or remove the link (svc makes the directory); the gateway skips this profile's cron jobs until then\n`,
    );
  });
});
