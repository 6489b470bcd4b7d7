import { describe, expect, it } from "vitest";
import { restartOnlyChanges } from "../../../src/config/restartOnly.js";
import { configSchema } from "../../../src/config/schema.js";

const config = (webhook: Record<string, unknown>) =>
  configSchema.parse({
    platforms: { webhook: { enabled: true, host: "127.0.0.1", port: 8644, ...webhook } },
  });

describe("restart-only keys a reload names", () => {
  it("names host and port changed in the file", () => {
    expect(restartOnlyChanges(config({}), config({ host: "0.0.0.0", port: 9000 }))).toEqual([
      "platforms.webhook.host",
      "platforms.webhook.port",
    ]);
  });

  it("leaves out a host or port that --host / --port overrides: a restart with the same command keeps the flag's", () => {
    const overridden = new Set(["platforms.webhook.port"]);
    expect(restartOnlyChanges(config({}), config({ port: 9000 }), overridden)).toEqual([]);
    expect(restartOnlyChanges(config({}), config({ host: "0.0.0.0", port: 9000 }), overridden)).toEqual([
      "platforms.webhook.host",
    ]);
  });

  it("names a key written under platforms.webhook.extra where it was written", () => {
    const extra = (settings: Record<string, unknown>) =>
      configSchema.parse({
        platforms: { webhook: { enabled: true, extra: { host: "127.0.0.1", ...settings } } },
      });
    expect(
      restartOnlyChanges(extra({ http_server: "uws" }), extra({ http_server: "node", port: 9000 })),
    ).toEqual(["platforms.webhook.extra.port", "platforms.webhook.extra.http_server"]);
    // Moved out of extra by the edit: named where the running file had it.
    expect(restartOnlyChanges(extra({ port: 9000 }), config({}))).toEqual(["platforms.webhook.extra.port"]);
  });
});
