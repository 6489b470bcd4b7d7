import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
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
});
