import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const warnings = (g: TestGateway) =>
  g
    .logs()
    .filter((l) => l.level === 40)
    .map((l) => l.msg);

describe("a route's profile that cannot work as written is named at startup (spec 4.1), not ignored", () => {
  it("multiplexing off: the binding is not enforced, and the warning names the key and the fix", async () => {
    gw = await startTestGateway({
      config: webhookConfig({
        bound: { secret: "s", profile: "work" },
        plain: { secret: "s" },
        typo: { secret: "s", profile: "wrok" },
      }),
      files: { "profiles/work/.keep": "" },
    });
    const file = `${gw.home.dir}/config.yaml`;
    expect(warnings(gw)).toContain(
      `[webhook] ${file}: platforms.webhook.routes.bound.profile: the binding to profile work is not enforced — gateway.multiplex_profiles is off, so the route answers at /webhooks/bound; set gateway.multiplex_profiles: true to serve it at /p/work/webhooks/bound only`,
    );
    // The route runs as its profile with or without multiplexing: a likely typo is named first, not "turn multiplexing on".
    expect(warnings(gw).filter((w) => w.includes("routes.typo"))).toEqual([
      `[webhook] ${file}: platforms.webhook.routes.typo.profile: profile wrok has no directory ${gw.home.dir}/profiles/wrok — did you mean work? The route runs as profile wrok all the same: its script, skills, in_file lists and cron job come from that directory (gateway.multiplex_profiles is off, so it answers at /webhooks/typo)`,
    ]);
    expect(warnings(gw).filter((w) => w.includes("routes.plain"))).toEqual([]);
  });

  it("multiplexing on: a profile with no directory near an existing one is named; a new one without files, existing and default ones are not", async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        {
          typo: { secret: "s", profile: "wrok" },
          fresh: { secret: "s", profile: "billing" },
          good: { secret: "s", profile: "work" },
          home: { secret: "s", profile: "default" },
        },
        {},
        { gateway: { multiplex_profiles: true } },
      ),
      files: { "profiles/work/.keep": "" },
    });
    const file = `${gw.home.dir}/config.yaml`;
    const profileWarnings = warnings(gw).filter((w) => w.includes(".profile:"));
    expect(profileWarnings).toEqual([
      `[webhook] ${file}: platforms.webhook.routes.typo.profile: profile wrok has no directory ${gw.home.dir}/profiles/wrok — did you mean work? The route answers only at /p/wrok/webhooks/typo`,
    ]);
  });
  it("a subscription's profile gets the same check at each load: a likely typo is named with the profile meant", async () => {
    gw = await startTestGateway({
      config: webhookConfig({}, {}, { gateway: { multiplex_profiles: true } }),
      files: {
        "profiles/work/.keep": "",
        "webhook_subscriptions.json": JSON.stringify({
          typo: { secret: "s", profile: "wrok" },
          fresh: { secret: "s", profile: "billing" },
          good: { secret: "s", profile: "work" },
        }),
      },
    });
    expect(warnings(gw).filter((w) => w.includes("profile"))).toEqual([
      `[webhook] dynamic subscription typo: profile wrok has no directory ${gw.home.dir}/profiles/wrok — did you mean work? The route answers only at /p/wrok/webhooks/typo`,
    ]);
  });

  it("a route's toolsets name that is neither built in nor an MCP server is named at startup, with the likely spelling", async () => {
    gw = await startTestGateway({
      config: webhookConfig({ t: { secret: "s", toolsets: ["web_serch", "svc-webhook", "no_mcp"] } }),
    });
    expect(warnings(gw).filter((w) => w.includes(".toolsets:"))).toEqual([
      `[webhook] ${gw.home.dir}/config.yaml: platforms.webhook.routes.t.toolsets: unknown toolset "web_serch" — did you mean web_search?; runs of the route drop it (known: svc-webhook, web_search, web_extract, vision_analyze, clarify, web, terminal, file, code_execution, browser, memory, mcp, no_mcp, or an mcp_servers name)`,
    ]);
  });
});
