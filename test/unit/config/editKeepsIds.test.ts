import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { addServers, removeServer } from "../../../src/io/mcpServersEdit.js";
import { addServerToConfig } from "../../../src/io/oauth/installWriter.js";
import { setYamlValues } from "../../../src/io/yamlEdit.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * `svc gateway setup` and `svc mcp install` rewrite config.yaml through the yaml Document API. Ids the
 * user wrote unquoted must come out as written: an integer past 2^53 read as a JavaScript number is
 * written back rounded (Discord snowflake 1234567890123456789 → 1234567890123456800, another channel).
 */

let home: TempHome;
afterEach(() => home.cleanup());

const CONFIG = `platforms:
  discord:
    enabled: true
    token: t
    home_channel: 1234567890123456789
  webhook:
    enabled: false
    routes:
      r:
        secret: s
        deliver: slack
        deliver_extra:
          chat_id: 123456789012345678901
          thread_ts: 1700000000.000100
`;

const ids = [
  "home_channel: 1234567890123456789",
  "chat_id: 123456789012345678901",
  "thread_ts: 1700000000.000100",
];

describe("config.yaml edits keep unquoted ids digit for digit", () => {
  it("svc gateway setup (setYamlValues)", () => {
    home = tempHome();
    const file = home.write("config.yaml", CONFIG);
    setYamlValues(file, [[["platforms", "webhook", "enabled"], true]]);
    const text = readFileSync(file, "utf8");
    for (const id of ids) expect([id, text.includes(id)]).toEqual([id, true]);
    expect(text).toContain("enabled: true\n    routes:");
    const { config } = loadConfig({ home: home.dir, env: {} });
    expect(config.platforms.webhook.routes.r?.deliver_extra).toEqual({
      chat_id: "123456789012345678901",
      thread_ts: "1700000000.000100",
    });
  });

  it("svc mcp install (addServerToConfig)", () => {
    home = tempHome();
    const file = home.write("config.yaml", CONFIG);
    addServerToConfig(file, "docs", { url: "https://mcp.example.com/mcp" });
    const text = readFileSync(file, "utf8");
    for (const id of ids) expect([id, text.includes(id)]).toEqual([id, true]);
    expect(text).toContain("mcp_servers:\n  docs:\n    url: https://mcp.example.com/mcp");
  });

  // Numbers other than long integers were printed from the value read: "+1555…" lost its "+" (the SMS
  // went to another To), 007 became 7, .5 0.5, 1e3 1e+3, 0x1F 0x1f.
  const WRITTEN = `platforms:
  sms: {enabled: true, account_sid: AC1, auth_token: t, from: "+15550001111", home_channel: +15552223333}
  webhook:
    enabled: false
    port: 8644
    routes:
      r:
        secret: s
        deliver: sms
        deliver_extra: {chat_id: +15551234567, a: 007, b: .5, c: 1e3, d: 0x1F, e: -0.0, f: 1.50, g: +.5e-3}
`;
  const written = [
    "home_channel: +15552223333",
    "chat_id: +15551234567",
    "a: 007",
    "b: .5",
    "c: 1e3",
    "d: 0x1F",
    "e: -0.0",
    "f: 1.50",
    "g: +.5e-3",
  ];
  const keepsText = (text: string) => {
    for (const id of written) expect([id, text.includes(id)]).toEqual([id, true]);
  };

  it("every number left alone is written back as in the file (setup, mcp install/add/remove)", () => {
    home = tempHome();
    const file = home.write("config.yaml", WRITTEN);
    setYamlValues(file, [[["platforms", "webhook", "enabled"], true]]);
    keepsText(readFileSync(file, "utf8"));
    addServerToConfig(file, "docs", { url: "https://mcp.example.com/mcp" });
    keepsText(readFileSync(file, "utf8"));
    addServers(file, { more: { url: "https://mcp.example.com/more" } }, { doing: "add" });
    keepsText(readFileSync(file, "utf8"));
    expect(removeServer(file, "more")).toBe(true);
    keepsText(readFileSync(file, "utf8"));
    const { config } = loadConfig({ home: home.dir, env: {} });
    expect(config.platforms.webhook.routes.r?.deliver_extra?.chat_id).toBe("+15551234567");
  });

  it("a number the edit changes is written from its new value", () => {
    home = tempHome();
    const file = home.write("config.yaml", WRITTEN);
    setYamlValues(file, [
      [["platforms", "webhook", "port"], 9000],
      [["platforms", "webhook", "routes", "r", "deliver_extra", "a"], 7],
    ]);
    const text = readFileSync(file, "utf8");
    expect(text).toContain("port: 9000\n");
    expect(text).toContain("a: 7,");
    expect(text).toContain("chat_id: +15551234567");
  });
});
