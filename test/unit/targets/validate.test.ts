import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { silentLogger } from "../../../src/io/log.js";
import { resolveChatId } from "../../../src/io/targets/chat.js";
import { forgeDestination } from "../../../src/io/targets/forgeComment.js";
import { canonicalTarget } from "../../../src/io/targets/names.js";
import { createTargets } from "../../../src/io/targets/registry.js";
import type { DeliveryMessage } from "../../../src/io/targets/target.js";
import { targetStartupProblems } from "../../../src/io/targets/validate.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

function load(yaml: string, env: Record<string, string> = {}, dotenv?: string) {
  home = tempHome();
  home.write("config.yaml", yaml);
  if (dotenv !== undefined) home.write(".env", dotenv);
  return loadConfig({ home: home.dir, env });
}

const route = (deliver: string, extra = "") =>
  `platforms:\n  webhook:\n    enabled: true\n    secret: s\n    routes:\n      r1:\n        deliver: ${deliver}\n${extra}`;

describe("target names", () => {
  it.each([
    ["chat_1", "telegram"],
    ["chat_7", "mattermost"],
    ["chat_13", "qqbot"],
    ["github_comment", "forge_comment"],
    ["homeassistant", "home_automation"],
    ["sms", "sms"],
    ["log", "log"],
  ])("%s is %s", (alias, canonical) => {
    expect(canonicalTarget(alias)).toBe(canonical);
  });

  it("knows no other names", () => {
    expect(canonicalTarget("chat_14")).toBeUndefined();
    expect(canonicalTarget("toString")).toBeUndefined();
  });
});

describe("platform config", () => {
  it("accepts chat_N and alias keys, with $VAR references from .env", () => {
    const { config } = load(
      `platforms:\n  chat_1:\n    enabled: true\n    token: $${"{"}TG_TOKEN}\n    home_channel: -100123\n`,
      {},
      "TG_TOKEN=123:abc\n",
    );
    expect(config.platforms.telegram).toMatchObject({
      enabled: true,
      token: "123:abc",
      home_channel: "-100123",
      base_url: "https://api.telegram.org",
    });
  });

  it("names an enabled platform's missing credential beside another platform's wrong value, in one run", () => {
    let message = "";
    try {
      load(
        'platforms:\n  email:\n    enabled: true\n    host: h\n    from: a@example.org\n    port: "587"\n  sms:\n    enabled: true\n    account_sid: AC1\n    auth_token: t\n',
      );
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/platforms\.email\.port: /);
    expect(message).toMatch(/platforms\.sms\.from: required when sms is enabled/);
  });

  it("an enabled email's login needs both user and password", () => {
    const email = (login: string) =>
      load(`platforms:\n  email:\n    enabled: true\n    host: h\n    from: a@example.org\n${login}`);
    expect(() => email("    user: svc\n")).toThrow(/platforms\.email\.password: required when user is set/);
    expect(() => email("    password: p\n")).toThrow(/platforms\.email\.user: required when password is set/);
    expect(() => email("    user: svc\n    password: p\n")).not.toThrow();
  });

  it("refuses two keys naming one platform", () => {
    expect(() => load("platforms:\n  chat_3: {}\n  slack: {}\n")).toThrow(
      /platforms\.chat_3: names the same platform as "slack" — keep one of them/,
    );
  });

  it("names missing credentials of an enabled platform", () => {
    expect(() => load("platforms:\n  sms:\n    enabled: true\n    account_sid: AC1\n")).toThrow(
      /platforms\.sms\.auth_token: required when sms is enabled/,
    );
  });

  it("rejects a misspelt credential key", () => {
    expect(() => load("platforms:\n  discord:\n    tokn: x\n")).toThrow(
      /platforms\.discord: unknown key "tokn"/,
    );
  });
});

describe("targetStartupProblems", () => {
  it("accepts log and an enabled platform with a chat", () => {
    const { config, paths } = load(
      `${route("chat_1", "        deliver_extra: {chat_id: 5}\n")}  telegram: {enabled: true, token: t}\n`,
    );
    expect(targetStartupProblems(config, paths.config)).toEqual({
      unknown: [],
      notEnabled: [],
      warnings: [],
    });
  });

  it("names a deliver_extra key the target never reads also while its platform is not enabled", () => {
    const { config, paths } = load(route("telegram", "        deliver_extra: {chatid: 5}\n"));
    const problems = targetStartupProblems(config, paths.config);
    expect(problems.notEnabled).toHaveLength(1);
    expect(problems.warnings).toEqual([
      expect.stringMatching(
        /routes\.r1\.deliver_extra\.chatid: telegram does not read it — did you mean chat_id\?/,
      ),
    ]);
  });

  it("names a deliver: ${TARGET} that nothing sets as not set, not as an unknown target", () => {
    const { config, paths } = load(route("${TARGET}"));
    expect(targetStartupProblems(config, paths.config).unknown).toEqual([
      `${paths.config}: platforms.webhook.routes.r1.deliver: \${TARGET} is not set — set TARGET in ${home.dir}/.env or the environment`,
    ]);
  });

  it("says so when the route's own profile .env sets the target variable: config.yaml does not read that file", () => {
    const { config, paths } = load(route("$" + "{WORK_TARGET}", "        profile: work\n"));
    home.write("profiles/work/.env", "WORK_TARGET=telegram\n", 0o600);
    expect(targetStartupProblems(config, paths.config).unknown).toEqual([
      `${paths.config}: platforms.webhook.routes.r1.deliver: \${WORK_TARGET} is not set — set WORK_TARGET in ${home.dir}/.env or the environment (${home.dir}/profiles/work/.env sets it, but config.yaml reads its \${...} values from ${home.dir}/.env only: a profile's .env serves only that profile's MCP connections)`,
    ]);
  });

  it("refuses a route whose platform is not enabled (spec 4.4), naming the route and the fix", () => {
    const { config, paths } = load(route("telegram"));
    expect(targetStartupProblems(config, paths.config)).toEqual({
      unknown: [],
      warnings: [],
      notEnabled: [
        `${paths.config}: platforms.webhook.routes.r1.deliver: telegram needs platforms.telegram enabled — set platforms.telegram.enabled: true with its credentials (see docs/delivery-targets.md), or deliver to log`,
      ],
    });
  });

  it("forge_comment needs no platforms section (gh on PATH), nor enabled in one; an explicit enabled: false turns it off", () => {
    const extra = "        deliver_extra: {repo: a/b, pr_number: 1}\n";
    const implicit = load(route("forge_comment", extra));
    expect(targetStartupProblems(implicit.config, implicit.paths.config)).toEqual({
      unknown: [],
      notEnabled: [],
      warnings: [],
    });
    home.cleanup();
    // A section that only sets the gh binary leaves the target available, as without a section.
    const command = load(`${route("forge_comment", extra)}  forge_comment: {command: /usr/local/bin/gh}\n`);
    expect(targetStartupProblems(command.config, command.paths.config).notEnabled).toEqual([]);
    const registry = createTargets(command.config, { logger: silentLogger() });
    expect(registry.get("forge_comment")).toBeDefined();
    home.cleanup();
    const off = load(`${route("forge_comment", extra)}  forge_comment: {enabled: false}\n`);
    expect(targetStartupProblems(off.config, off.paths.config).notEnabled).toEqual([
      expect.stringMatching(/forge_comment needs platforms\.forge_comment enabled/),
    ]);
  });

  it("refuses an unknown target, listing the valid names", () => {
    const { config, paths } = load(route("pager"));
    const {
      unknown: [problem],
    } = targetStartupProblems(config, paths.config);
    expect(problem).toMatch(
      /routes\.r1\.deliver: unknown target "pager" — use one of log, telegram, .*chat_1, .*github_comment/,
    );
  });

  it("requires repo and pr_number for forge_comment", () => {
    const { config, paths } = load(`${route("github_comment")}  forge_comment: {enabled: true}\n`);
    const problems = targetStartupProblems(config, paths.config).warnings;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/deliver_extra\.repo: required for forge_comment/);
    expect(problems[1]).toMatch(/deliver_extra\.pr_number: required for forge_comment/);
  });

  it("accepts templates for repo and pr_number but checks literal values", () => {
    const templated = load(
      `${route("forge_comment", "        deliver_extra: {repo: '{repository.full_name}', pr_number: '{number}'}\n")}  forge_comment: {enabled: true}\n`,
    );
    expect(targetStartupProblems(templated.config, templated.paths.config).warnings).toEqual([]);
    home.cleanup();
    const literal = load(
      `${route("forge_comment", "        deliver_extra: {repo: 'not a repo', pr_number: -3}\n")}  forge_comment: {enabled: true}\n`,
    );
    const problems = targetStartupProblems(literal.config, literal.paths.config).warnings;
    expect(problems.join("\n")).toMatch(/"not a repo" is not owner\/name/);
    expect(problems.join("\n")).toMatch(/"-3" is not a positive integer/);
  });

  it("warns about a literal pr_number exactly when a delivery would refuse it (007 is #7; 11 digits are refused)", () => {
    const problemsFor = (pr: string) => {
      const loaded = load(
        `${route("forge_comment", `        deliver_extra: {repo: octo-org/octo-repo, pr_number: ${pr}}\n`)}  forge_comment: {enabled: true}\n`,
      );
      const warnings = targetStartupProblems(loaded.config, loaded.paths.config).warnings;
      home.cleanup();
      return warnings;
    };
    const delivers = (pr: string) => {
      try {
        forgeDestination({ extra: { repo: "octo-org/octo-repo", pr_number: pr }, route: "r" });
        return true;
      } catch {
        return false;
      }
    };
    for (const pr of ["007", "42", "12345678901", "0", "000"]) {
      expect(problemsFor(pr).length === 0, pr).toBe(delivers(pr));
    }
    expect(problemsFor("007")).toEqual([]);
    expect(problemsFor("12345678901").join("\n")).toMatch(
      /"12345678901" is not a positive integer \(more than 10 digits: longer than any pull request number\)$/,
    );
  });

  it("a cron_job route's deliver, which has no effect, is neither refused for a platform not enabled nor asked for a chat", () => {
    const off = load(route("discord", "        cron_job: nightly\n"));
    expect(targetStartupProblems(off.config, off.paths.config)).toEqual({
      unknown: [],
      notEnabled: [],
      warnings: [],
    });
    home.cleanup();
    const noChat = load(
      `${route("discord", "        cron_job: nightly\n")}  discord: {enabled: true, token: t}\n`,
    );
    expect(targetStartupProblems(noChat.config, noChat.paths.config).warnings).toEqual([]);
    home.cleanup();
    // A name that is no target at all is still refused: it is a wrong value, not an unused one.
    const unknown = load(route("pager", "        cron_job: nightly\n"));
    expect(targetStartupProblems(unknown.config, unknown.paths.config).unknown).toHaveLength(1);
  });

  it("a cron job's target (templates: false): a {template} in deliver_extra is named as sent as written, and no hint offers one", () => {
    const templated = load(
      `${route("forge_comment", "        deliver_extra: {repo: '{repository.full_name}', pr_number: '{number}'}\n")}  forge_comment: {enabled: true}\n`,
    );
    const at = `${templated.paths.config}: platforms.webhook.routes.r1.deliver_extra`;
    expect(
      targetStartupProblems(templated.config, templated.paths.config, { templates: false }).warnings,
    ).toEqual([
      `${at}.repo: "{repository.full_name}" is sent as written — a cron job's deliver_extra is not a template (a job has no payload to fill it from); give the value itself`,
      `${at}.pr_number: "{number}" is sent as written — a cron job's deliver_extra is not a template (a job has no payload to fill it from); give the value itself`,
    ]);
    home.cleanup();
    const missing = load(`${route("github_comment")}  forge_comment: {enabled: true}\n`);
    expect(
      targetStartupProblems(missing.config, missing.paths.config, { templates: false }).warnings,
    ).toEqual([
      `${missing.paths.config}: platforms.webhook.routes.r1.deliver_extra.repo: required for forge_comment — set it to owner/name`,
      `${missing.paths.config}: platforms.webhook.routes.r1.deliver_extra.pr_number: required for forge_comment — set it to a number`,
    ]);
    home.cleanup();
    // On a platform not enabled yet too: enabled later, the job would send the template to no chat.
    const off = load(route("telegram", "        deliver_extra: {chat_id: '{chat.id}'}\n"));
    const problems = targetStartupProblems(off.config, off.paths.config, { templates: false });
    expect(problems.notEnabled).toHaveLength(1);
    expect(problems.warnings).toEqual([
      `${off.paths.config}: platforms.webhook.routes.r1.deliver_extra.chat_id: "{chat.id}" is sent as written — a cron job's deliver_extra is not a template (a job has no payload to fill it from); give the value itself`,
    ]);
  });

  it("asks for a chat when neither deliver_extra.chat_id nor home_channel is set", () => {
    const { config, paths } = load(`${route("discord")}  discord: {enabled: true, token: t}\n`);
    expect(targetStartupProblems(config, paths.config).warnings).toEqual([
      `${paths.config}: platforms.webhook.routes.r1.deliver_extra.chat_id: missing and platforms.discord.home_channel is not set — set one of them (or deliver_extra.thread_id: a thread is a channel of its own) so discord knows where to deliver`,
    ]);
  });

  it("email and SMS, which take deliver_extra.to as well, name it; so does the delivery that finds none", () => {
    const { config, paths } = load(
      `${route("email")}  email: {enabled: true, host: smtp.example.org, from: svc@example.org}\n`,
    );
    expect(targetStartupProblems(config, paths.config).warnings).toEqual([
      `${paths.config}: platforms.webhook.routes.r1.deliver_extra.chat_id: missing and platforms.email.home_channel is not set — set one of them (or deliver_extra.to) so email knows where to deliver`,
    ]);
    expect(() =>
      resolveChatId("sms", { route: "r1", extra: {} } as unknown as DeliveryMessage, undefined, [
        "chat_id",
        "to",
      ]),
    ).toThrow(
      'sms: no chat to deliver to — set deliver_extra.chat_id (or to) on route "r1" or platforms.sms.home_channel',
    );
  });

  it("counts a blank home_channel (a variable set empty in .env) as none", () => {
    const { config, paths } = load(
      `${route("discord")}  discord: {enabled: true, token: t, home_channel: "$${"{"}DISCORD_HOME}"}\n`,
      {},
      "DISCORD_HOME=\n",
    );
    expect(config.platforms.discord?.home_channel).toBe("");
    expect(targetStartupProblems(config, paths.config).warnings).toEqual([
      `${paths.config}: platforms.webhook.routes.r1.deliver_extra.chat_id: missing and platforms.discord.home_channel is blank — set one of them (or deliver_extra.thread_id: a thread is a channel of its own) so discord knows where to deliver`,
    ]);
  });

  it("names a Home Assistant notify service no request can reach (a template is left to the event)", () => {
    const { config, paths } = load(
      `${route("homeassistant", '        deliver_extra: {chat_id: "Notify.Pixel 8"}\n')}      r2:\n        deliver: home_automation\n        deliver_extra: {service: notify.mobile_app_pixel_8}\n      r3:\n        deliver: home_automation\n        deliver_extra: {service: "{device}"}\n  home_automation: {enabled: true, token: t}\n`,
    );
    expect(targetStartupProblems(config, paths.config).warnings).toEqual([
      `${paths.config}: platforms.webhook.routes.r1.deliver_extra.chat_id: "Notify.Pixel 8" is not a notify service name (lower-case letters, digits, "_") — every delivery to it fails`,
    ]);
  });

  it("names a recipient written as spaces alone (every delivery fails; the home channel is not used instead)", () => {
    const { config, paths } = load(
      `${route("discord", '        deliver_extra: {chat_id: "  "}\n')}  discord: {enabled: true, token: t, home_channel: "1"}\n`,
    );
    expect(targetStartupProblems(config, paths.config).warnings).toEqual([
      `${paths.config}: platforms.webhook.routes.r1.deliver_extra.chat_id: blank — every delivery to it fails (a route that names its recipient never falls back to home_channel); set it, or remove it to use platforms.discord.home_channel`,
    ]);
  });
});

describe("email recipients written in deliver_extra", () => {
  it("names a list of addresses (every delivery to it is refused); one address, a quoted display name or a template passes", () => {
    const { config, paths } = load(
      `${route("email", '        deliver_extra: {to: "ops@example.org, dev@example.org"}\n')}      r2:\n        deliver: email\n        deliver_extra: {chat_id: "a@example.org; b@example.org"}\n      r3:\n        deliver: email\n        deliver_extra: {to: '"Doe, Jane" <jane@example.org>'}\n      r4:\n        deliver: email\n        deliver_extra: {to: "{pusher.email}"}\n  email: {enabled: true, host: smtp.example.org, from: svc@example.org, home_channel: "a@example.org, b@example.org"}\n`,
    );
    expect(targetStartupProblems(config, paths.config).warnings).toEqual([
      `${paths.config}: platforms.webhook.routes.r1.deliver_extra.to: names more than one recipient — every delivery to it fails (deliver_extra takes one address); put the list in platforms.email.home_channel`,
      `${paths.config}: platforms.webhook.routes.r2.deliver_extra.chat_id: names more than one recipient — every delivery to it fails (deliver_extra takes one address); put the list in platforms.email.home_channel`,
    ]);
  });
});

describe("platform config errors name the key as written", () => {
  it("reports a missing credential under the alias the user wrote", () => {
    expect(() => load("platforms:\n  chat_1:\n    enabled: true\n")).toThrow(
      /platforms\.chat_1\.token: required when chat_1 is enabled/,
    );
  });

  it("lists the platforms for an unknown key", () => {
    expect(() => load("platforms:\n  matrx2000: {}\n")).toThrow(
      /platforms\.matrx2000: unknown platform — use one of webhook, telegram, .*chat_13/,
    );
  });

  it("names the platform meant by a key one or two letters off, or in other case (webhooks, Telegram)", () => {
    expect(() => load("platforms:\n  telegrm: {}\n")).toThrow(
      /platforms\.telegrm: unknown platform — did you mean "telegram"\? \(use one of webhook, telegram, .*chat_13/,
    );
    expect(() => load("platforms:\n  webhooks:\n    enabled: true\n")).toThrow(
      /platforms\.webhooks: unknown platform — did you mean "webhook"\?/,
    );
    expect(() => load("platforms:\n  Telegram: {}\n")).toThrow(/did you mean "telegram"\?/);
  });
});

describe("deliver_extra keys the target never reads", () => {
  it("a misspelt chat_id (which would send every message to the home channel) is named with the keys read", () => {
    const { config } = load(
      `${route("chat_1", "        deliver_extra: {chatid: '42', thread_id: '{t}'}\n")}  telegram: {enabled: true, token: t, home_channel: '-100'}\n`,
    );
    expect(targetStartupProblems(config, "config.yaml").warnings).toEqual([
      "config.yaml: platforms.webhook.routes.r1.deliver_extra.chatid: chat_1 does not read it — did you mean chat_id? (it reads chat_id, message_thread_id, thread_id)",
    ]);
  });
  it("every key a target reads passes: email's subject, home automation's service and title, slack's thread_ts", () => {
    const { config } = load(
      "platforms:\n  webhook:\n    enabled: true\n    secret: s\n    routes:\n" +
        "      e: {deliver: email, deliver_extra: {to: a@b.c, subject: s}}\n" +
        "      h: {deliver: home_automation, deliver_extra: {service: notify.x, title: t}}\n" +
        "      s: {deliver: slack, deliver_extra: {chat_id: C1, thread_ts: '1.2'}}\n" +
        "  email: {enabled: true, host: h, from: a@b.c}\n  home_automation: {enabled: true, token: t, base_url: 'http://h'}\n" +
        "  slack: {enabled: true, token: t}\n",
    );
    expect(targetStartupProblems(config, "config.yaml").warnings).toEqual([]);
  });
  it("a key read only in place of another that is set is named: thread_id beside a fixed message_thread_id, to beside chat_id", () => {
    const { config } = load(
      "platforms:\n  webhook:\n    enabled: true\n    secret: s\n    routes:\n" +
        "      t: {deliver: telegram, deliver_extra: {chat_id: '-100', message_thread_id: 17, thread_id: 99}}\n" +
        "      s: {deliver: slack, deliver_extra: {chat_id: C1, thread_ts: '1.2', thread_id: '3.4'}}\n" +
        "      e: {deliver: email, deliver_extra: {chat_id: a@b.c, to: '{user.email}'}}\n" +
        "      h: {deliver: home_automation, deliver_extra: {chat_id: notify.a, service: notify.b}}\n" +
        "  telegram: {enabled: true, token: t}\n  slack: {enabled: true, token: t}\n" +
        "  email: {enabled: true, host: h, from: a@b.c}\n  home_automation: {enabled: true, token: t, base_url: 'http://h'}\n",
    );
    const at = "config.yaml: platforms.webhook.routes";
    expect(targetStartupProblems(config, "config.yaml").warnings).toEqual([
      `${at}.t.deliver_extra.thread_id: telegram does not read it while message_thread_id names a thread (the first of message_thread_id, thread_id that names one is used) — remove one of them`,
      `${at}.s.deliver_extra.thread_id: slack does not read it while thread_ts names a thread (the first of thread_ts, message_thread_id, thread_id that names one is used) — remove one of them`,
      `${at}.e.deliver_extra.to: email does not read it while chat_id is set (the first of chat_id, to that is set is the recipient) — remove one of them`,
      `${at}.h.deliver_extra.service: home_automation does not read it while chat_id is set (the first of chat_id, service that is set is the recipient) — remove one of them`,
    ]);
  });
  it("a thread template the event may leave unfilled falls back to the next key: both are read", () => {
    const { config } = load(
      `${route("telegram", "        deliver_extra: {chat_id: '-100', message_thread_id: '{topic}', thread_id: 99}\n")}  telegram: {enabled: true, token: t}\n`,
    );
    expect(targetStartupProblems(config, "config.yaml").warnings).toEqual([]);
    // A cron job's value in braces is sent as written: the thread it names, so the next key is never read.
    const at = "config.yaml: platforms.webhook.routes.r1.deliver_extra";
    expect(targetStartupProblems(config, "config.yaml", { templates: false }).warnings).toEqual([
      `${at}.thread_id: telegram does not read it while message_thread_id names a thread (the first of message_thread_id, thread_id that names one is used) — remove one of them`,
      `${at}.message_thread_id: "{topic}" is sent as written — a cron job's deliver_extra is not a template (a job has no payload to fill it from); give the value itself`,
    ]);
  });
});

describe("sms numbers", () => {
  it("names a number written without its + and country code, which Twilio refuses (E.164 only); a +number with separators, a template or a sender name passes", () => {
    const { config, paths } = load(
      `${route("sms", '        deliver_extra: {to: "555-222-3333"}\n')}      r2:\n        deliver: sms\n        deliver_extra: {chat_id: "+1 (555) 222-3333"}\n      r3:\n        deliver: sms\n        deliver_extra: {to: "{phone}"}\n      r4:\n        deliver: sms\n      r5:\n        deliver: sms\n        deliver_extra: {to: "whatsapp:+15552223333"}\n  sms: {enabled: true, account_sid: AC1, auth_token: t, from: "+15550001111", home_channel: 5552223333}\n`,
    );
    expect(targetStartupProblems(config, paths.config).warnings).toEqual([
      `${paths.config}: platforms.webhook.routes.r1.deliver_extra.to: "555-222-3333" is no E.164 number — Twilio refuses every delivery to it (error 21211); write it with its + and country code, such as +15552223333`,
      `${paths.config}: platforms.webhook.routes.r4.deliver: sms delivers to platforms.sms.home_channel "5552223333", which is no E.164 number — Twilio refuses every delivery to it (error 21211); write it with its + and country code, such as +15552223333`,
    ]);
  });
});

describe("QQ chat ids", () => {
  it("names a kind with no id after it (group:, user:, channel:) as home_channel or chat_id, which every delivery refuses; an id or a template passes", () => {
    const { config, paths } = load(
      `${route("qqbot")}      r2:\n        deliver: qqbot\n        deliver_extra: {chat_id: "user: "}\n      r3:\n        deliver: qqbot\n        deliver_extra: {chat_id: "group:{group}"}\n      r4:\n        deliver: qqbot\n        deliver_extra: {chat_id: "channel:123"}\n  qqbot: {enabled: true, app_id: "1", client_secret: s, home_channel: "group:"}\n`,
    );
    expect(targetStartupProblems(config, paths.config).warnings).toEqual([
      `${paths.config}: platforms.webhook.routes.r1.deliver: qqbot delivers to platforms.qqbot.home_channel "group:", which has no id after "group:" — every delivery to it fails; write group:<group_openid>`,
      `${paths.config}: platforms.webhook.routes.r2.deliver_extra.chat_id: "user:" has no id after "user:" — every delivery to it fails; write user:<openid>`,
    ]);
  });
});
