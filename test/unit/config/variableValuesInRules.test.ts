import { describe, expect, it } from "vitest";
import { routeTable } from "../../../src/actors/routes.js";
import { checkConfig } from "../../../src/cli/config/check.js";
import { type LoadedConfig, loadConfig } from "../../../src/config/load.js";
import { profileBindingWarnings } from "../../../src/config/profileWarnings.js";
import { unusedSettingWarnings } from "../../../src/config/unusedSettings.js";
import { movedRoutes } from "../../../src/gateway/movedRoutes.js";
import { skillNameWarnings, unknownToolsetWarnings } from "../../../src/gateway/routeWarnings.js";
import { startupProblems } from "../../../src/gateway/startupProblems.js";
import { targetStartupProblems } from "../../../src/io/targets/validate.js";
import { configHomes } from "../../helpers/configHome.js";

const homes = configHomes();
const loaded = homes.loaded;

const NOT_SHOWN = "(the value it gives is not shown)";
const v = (name: string) => `$\{${name}}`;

/**
 * docs/configuration.md, "What a variable gives is never quoted back": the rules judged after the schema (a
 * start's and a reload's refusal, the warnings of the start and of svc config check) quote a value a `${VAR}`
 * gave as the file writes it. Each value below holds SECRET, which no line may show.
 */
describe(`the startup rules and warnings, of a value a $\{VAR} gave`, () => {
  it("an unknown deliver refuses the start naming the variable, and the INSECURE_NO_AUTH host rule too", () => {
    const { config } = loaded(
      [
        "platforms:",
        "  webhook:",
        "    enabled: true",
        `    host: ${v("H")}`,
        "    routes:",
        `      a: {secret: INSECURE_NO_AUTH, deliver: "${v("T")}"}`,
        "",
      ].join("\n"),
      "T=xoxb-SECRET-token\nH=10.0.0.9\n",
    );
    expect(startupProblems(config, "FILE")).toEqual([
      `FILE: platforms.webhook.routes.a.secret: INSECURE_NO_AUTH is only allowed on a loopback bind (127.0.0.1, localhost, ::1), but host is "${v("H")}" ${NOT_SHOWN} — set a real secret or bind to 127.0.0.1`,
      expect.stringMatching(
        /^FILE: platforms\.webhook\.routes\.a\.deliver: unknown target "\$\{T\}" \(the value it gives is not shown\) — use one of log, /,
      ),
    ]);
    // A --host given on the command line is no variable's: it is named as given.
    expect(startupProblems(config, "FILE", "10.0.0.8")[0]).toContain("but --host is 10.0.0.8 (it overrides");
  });

  it("a deliver_extra or home_channel value a target would fail on", () => {
    const { config } = loaded(
      [
        "platforms:",
        "  sms: {enabled: true, account_sid: a, auth_token: b, from: '+15550001111', home_channel: " +
          `"${v("HOME")}"}`,
        "  qqbot: {enabled: true, app_id: '1', client_secret: c}",
        "  home_automation: {enabled: true, token: t}",
        "  webhook:",
        "    routes:",
        `      forge: {secret: s3cret-s3cret, deliver: forge_comment, deliver_extra: {repo: "${v("REPO")}", pr_number: "${v("PR")}"}}`,
        "      sms: {secret: s3cret-s3cret, deliver: sms}",
        `      sms_to: {secret: s3cret-s3cret, deliver: sms, deliver_extra: {to: "${v("TO")}"}}`,
        `      qq: {secret: s3cret-s3cret, deliver: qqbot, deliver_extra: {chat_id: "${v("QQ")}"}}`,
        `      ha: {secret: s3cret-s3cret, deliver: home_automation, deliver_extra: {service: "${v("SVC")}"}}`,
        "",
      ].join("\n"),
      "REPO=SECRET\nPR=123456789012\nHOME=555 0100\nTO=555-0100\nQQ=group:\nSVC=notify.SECRET-x\n",
    );
    const { warnings } = targetStartupProblems(config, "FILE");
    expect(warnings.join("\n")).not.toMatch(/SECRET|0100|123456789012/);
    expect(warnings).toEqual([
      `FILE: platforms.webhook.routes.forge.deliver_extra.repo: "${v("REPO")}" ${NOT_SHOWN} is not owner/name (or host/owner/name)`,
      `FILE: platforms.webhook.routes.forge.deliver_extra.pr_number: "${v("PR")}" ${NOT_SHOWN} is not a positive integer`,
      `FILE: platforms.webhook.routes.sms.deliver: sms delivers to platforms.sms.home_channel "${v("HOME")}" ${NOT_SHOWN}, which is no E.164 number — Twilio refuses every delivery to it (error 21211); write it with its + and country code, such as +15552223333`,
      `FILE: platforms.webhook.routes.sms_to.deliver_extra.to: "${v("TO")}" ${NOT_SHOWN} is no E.164 number — Twilio refuses every delivery to it (error 21211); write it with its + and country code, such as +15552223333`,
      `FILE: platforms.webhook.routes.qq.deliver_extra.chat_id: "${v("QQ")}" ${NOT_SHOWN} has no id after "group:" — every delivery to it fails; write group:<group_openid>`,
      `FILE: platforms.webhook.routes.ha.deliver_extra.service: "${v("SVC")}" ${NOT_SHOWN} is not a notify service name (lower-case letters, digits, "_") — every delivery to it fails`,
    ]);
  });

  it("a route's toolsets entry, and agent.command's program and base_url", () => {
    const { config } = loaded(
      [
        "platforms:",
        "  webhook:",
        "    routes:",
        `      a: {secret: s3cret-s3cret, toolsets: [web, "${v("TS")}"], skills: ["${v("SK")}"]}`,
        "agent:",
        "  provider: command",
        `  command: ["${v("CMD")}", "--x"]`,
        "",
      ].join("\n"),
      "TS=SECRET-toolset\nCMD=sk-SECRET-not-a-program\nSK=skills/SECRET/review\n",
    );
    const route = config.platforms.webhook.routes.a;
    const said = [
      ...unknownToolsetWarnings([{ at: "FILE: a", toolsets: route?.toolsets }], []),
      ...skillNameWarnings(routeTable(config), "FILE"),
      ...unusedSettingWarnings(config, "FILE"),
    ];
    expect(said.join("\n")).not.toContain("SECRET");
    expect(unknownToolsetWarnings([{ at: "FILE: a", toolsets: route?.toolsets }], [])).toEqual([
      expect.stringMatching(
        /^FILE: a\.toolsets: unknown toolset "\$\{TS\}" \(the value it gives is not shown\); runs of the route drop it/,
      ),
    ]);
    // Nor is the skill's name written back from the path (`write review`).
    expect(skillNameWarnings(routeTable(config), "FILE")).toEqual([
      `[webhook] FILE: platforms.webhook.routes.a.skills: "${v("SK")}" ${NOT_SHOWN} is not a skill name (letters, digits, ".", "_" and "-", no path)`,
    ]);
    expect(unusedSettingWarnings(config, "FILE").filter((w) => w.includes("agent.command"))).toEqual([
      `[agent] FILE: agent.command: "${v("CMD")}" ${NOT_SHOWN} was not found on PATH — every agent run fails to start until it can be: write the absolute path of an executable file, or the name of one on the gateway's PATH`,
    ]);
    const model = loaded(
      `agent:\n  provider: openai\n  model: m\n  api_key: k\n  base_url: "${v("BASE")}"\n`,
      "BASE=https://api.openai.com/SECRET\n",
    );
    expect(unusedSettingWarnings(model.config, "FILE").filter((w) => w.includes("base_url"))).toEqual([
      `[agent] FILE: agent.base_url "${v("BASE")}" ${NOT_SHOWN} has no /v1: runs would post to its /chat/completions, which the API answers 404 — write https://api.openai.com/v1, or leave base_url out`,
    ]);
  });

  it("a route's profile: its binding and likely typo, the path a reload moves it to, its MCP variables", async () => {
    const yaml = (multiplex: boolean) =>
      [
        `gateway: {multiplex_profiles: ${multiplex}}`,
        "platforms:",
        "  webhook:",
        "    enabled: true",
        "    host: 127.0.0.1",
        "    routes:",
        `      r2: {secret: s3cret-s3cret, profile: "${v("P")}"}`,
        "mcp_servers:",
        `  one: {command: echo, args: ["${v("S2")}"]}`,
        "",
      ].join("\n");
    const off = loaded(yaml(false), "P=wrok\nS2=x\n");
    homes.home.write("config.yaml", yaml(true));
    const multiplexed = loadConfig({ home: homes.home.dir, env: {} });
    const binding = (config: LoadedConfig["config"], multiplex: boolean, profiles: string[]) =>
      profileBindingWarnings(routeTable(config).staticRoutes.values(), {
        file: "FILE",
        multiplex,
        profiles,
        profilesDir: "HOME/profiles",
      });
    const said = [
      ...binding(off.config, false, []),
      ...binding(off.config, false, ["work"]),
      ...binding(multiplexed.config, true, ["work"]),
      ...movedRoutes(off.config, multiplexed.config),
    ];
    expect(said.join("\n")).not.toContain("wrok");
    expect(said).toEqual([
      `[webhook] FILE: platforms.webhook.routes.r2.profile: the binding to profile "${v("P")}" ${NOT_SHOWN} is not enforced — gateway.multiplex_profiles is off, so the route answers at /webhooks/r2; set gateway.multiplex_profiles: true to serve it at /p/<profile>/webhooks/r2 only`,
      `[webhook] FILE: platforms.webhook.routes.r2.profile: profile "${v("P")}" ${NOT_SHOWN} has no directory under HOME/profiles — did you mean work? The route runs as that profile all the same: its script, skills, in_file lists and cron job come from that directory (gateway.multiplex_profiles is off, so it answers at /webhooks/r2)`,
      `[webhook] FILE: platforms.webhook.routes.r2.profile: profile "${v("P")}" ${NOT_SHOWN} has no directory under HOME/profiles — did you mean work? The route answers only at /p/<profile>/webhooks/r2`,
      `platforms.webhook.routes.r2 to /p/<"${v("P")}" ${NOT_SHOWN}>/webhooks/r2, no longer at /webhooks/r2`,
    ]);
    // svc config check: the binding, and the variable its runs do not get from the profile's own .env.
    homes.home.write("config.yaml", yaml(false));
    const file = `${homes.home.dir}/config.yaml`;
    const { warnings } = await checkConfig({ home: homes.home.dir, env: {} });
    expect(warnings.join("\n")).not.toContain("wrok");
    expect(warnings.filter((w) => w.includes("profile"))).toEqual([
      `${file}: platforms.webhook.routes.r2.profile: the binding to profile "${v("P")}" ${NOT_SHOWN} is not enforced — gateway.multiplex_profiles is off, so the route answers at /webhooks/r2; set gateway.multiplex_profiles: true to serve it at /p/<profile>/webhooks/r2 only`,
      `${file}: mcp_servers.one: ${v("S2")} is not set for profile "${v("P")}" ${NOT_SHOWN}, whose runs connect with its own .env — add S2=... to that profile's .env (in its directory under ${homes.home.dir}/profiles) or the environment`,
    ]);
  });
});
