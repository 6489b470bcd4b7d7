import { describe, expect, it } from "vitest";
import { describeRestartKeys, restartOnlyChanges } from "../../../src/config/restartOnly.js";
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

describe("restart-only keys that the re-read file leaves without effect", () => {
  const full = (rest: Record<string, unknown>, webhook: Record<string, unknown> = {}) =>
    configSchema.parse({
      ...rest,
      platforms: { webhook: { enabled: true, host: "127.0.0.1", port: 8644, ...webhook } },
    });

  it("does not name state.redis_url or redis_key_prefix while state.backend stays local (Redis is not used)", () => {
    const local = (prefix: string) => full({ state: { backend: "local", redis_key_prefix: prefix } });
    expect(restartOnlyChanges(local("svc"), local("other"))).toEqual([]);
    // A restart to Redis uses them: named with the backend.
    expect(
      restartOnlyChanges(
        local("svc"),
        full({
          state: { backend: "redis", redis_url: "redis://127.0.0.1:6379/0", redis_key_prefix: "other" },
        }),
      ),
    ).toEqual(["state.backend", "state.redis_url", "state.redis_key_prefix"]);
  });

  it("does not name platforms.webhook.workers when the re-read file's http_server is node (which has no ingress threads)", () => {
    expect(
      restartOnlyChanges(full({}, { http_server: "node" }), full({}, { http_server: "node", workers: 2 })),
    ).toEqual([]);
    expect(restartOnlyChanges(full({}, {}), full({}, { http_server: "node", workers: 2 }))).toEqual([
      "platforms.webhook.http_server",
    ]);
    expect(restartOnlyChanges(full({}, {}), full({}, { workers: 2 }))).toEqual(["platforms.webhook.workers"]);
  });
});

describe("the variables a reload's WARN names with a restart-only key", () => {
  const scope = (secrets: Record<string, string>, env: Record<string, string> = {}) => ({ secrets, env });

  it("names the ${VAR} of state.redis_url whose value changed, not its value (which may hold a password)", () => {
    const written = {
      state: { backend: "redis", redis_url: "redis://:${REDIS_PASSWORD}@${REDIS_HOST}:6379/0" },
    };
    const before = scope({ REDIS_PASSWORD: "hunter2-old", REDIS_HOST: "cache-a" });
    expect(
      describeRestartKeys(
        ["state.redis_url"],
        [before, scope({ REDIS_PASSWORD: "hunter2-new", REDIS_HOST: "cache-a" })],
        written,
      ),
    ).toBe("state.redis_url (from ${REDIS_PASSWORD})");
    // Both changed (or the file's text itself did): every variable its text reads, in its order.
    expect(
      describeRestartKeys(
        ["state.redis_url"],
        [before, scope({}, { REDIS_PASSWORD: "x", REDIS_HOST: "cache-b" })],
        written,
      ),
    ).toBe("state.redis_url (from ${REDIS_PASSWORD}, ${REDIS_HOST})");
    expect(describeRestartKeys(["state.redis_url"], [before, before], written)).toBe(
      "state.redis_url (from ${REDIS_PASSWORD}, ${REDIS_HOST})",
    );
  });

  it("names a key written under platforms.webhook.extra by its written text; a WEBHOOK_* variable that overrides it wins", () => {
    const written = { platforms: { webhook: { extra: { port: "${PORT}" }, enabled: "${ON}" } } };
    expect(
      describeRestartKeys(
        ["platforms.webhook.extra.port", "platforms.webhook.enabled", "agent.max_concurrent_runs"],
        [scope({ PORT: "1" }), scope({ PORT: "2" })],
        written,
      ),
    ).toBe(
      "platforms.webhook.extra.port (from ${PORT}), platforms.webhook.enabled (from ${ON}), agent.max_concurrent_runs",
    );
    expect(
      describeRestartKeys(
        ["platforms.webhook.extra.port"],
        [scope({}), scope({ WEBHOOK_PORT: "9000" })],
        written,
      ),
    ).toBe("platforms.webhook.extra.port (set by WEBHOOK_PORT)");
  });
});
