import { EventEmitter } from "node:events";
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { createRedisHealth } from "../../../../src/io/state/redis/connection.js";
import { captureLogger } from "../../../fakes/logCapture.js";

const LABEL = "redis://127.0.0.1:6390/0";

/** Redis's refusal of a command, as ioredis raises it. */
const refused = (message: string) => Object.assign(new Error(message), { name: "ReplyError" });

/**
 * A worker (platforms.webhook off, state.backend: redis) takes no requests: what waits while Redis refuses
 * is the shared queue's runs, as its outage and recovery lines already say (docs/durability.md).
 */
describe.each([
  ["runs", "the shared queue's runs wait", "requests that need it are answered 503"],
  ["requests", "requests that need it are answered 503", "the shared queue's runs wait"],
] as const)("Redis's refusals on an instance that serves %s", (serves, said, notSaid) => {
  it("a refusal of the URL's credentials on reconnecting says what waits", () => {
    const log = captureLogger();
    const health = createRedisHealth(LABEL, log.logger, undefined, undefined, undefined, serves);
    const connection = Object.assign(new EventEmitter(), { status: "reconnecting" });
    health.watch("commands", connection as unknown as Redis);
    connection.emit("error", new Error("WRONGPASS invalid username-password pair or user is disabled."));
    const line = log.messages().find((m) => m.includes("refused the credentials"));
    expect(line).toContain(`${said} until it takes them`);
    expect(line).not.toContain(notSaid);
  });

  it("a reconnect refused for want of a password (NOAUTH: the URL gives none) is said as the start says it, with its fix, not as refused credentials", () => {
    const log = captureLogger();
    const health = createRedisHealth(LABEL, log.logger, undefined, undefined, undefined, serves);
    const connection = Object.assign(new EventEmitter(), { status: "reconnecting" });
    health.watch("commands", connection as unknown as Redis);
    connection.emit("error", new Error("NOAUTH Authentication required."));
    const line = log.messages().find((m) => m.includes("on reconnecting"));
    expect(line).toBe(
      `[state] Redis at ${LABEL} asks for a password, and state.redis_url gives none on reconnecting (NOAUTH Authentication required.); ${said} until it is given one — write it in state.redis_url (redis://:password@host:6379/0, or redis://user:password@… for an ACL user; keep it in .env), then restart the gateway`,
    );
  });

  it("a refused command (MISCONF) says what waits", () => {
    const log = captureLogger();
    const health = createRedisHealth(LABEL, log.logger, undefined, undefined, undefined, serves);
    expect(() => health.fail(refused("MISCONF Redis is configured to save RDB snapshots"))).toThrow();
    const line = log.messages().find((m) => m.includes("refused a command"));
    expect(line).toContain(`${said} while it refuses`);
    expect(line).not.toContain(notSaid);
    health.taken();
    expect(log.messages().find((m) => m.includes("takes writes again"))).toContain(
      serves === "runs" ? "; the shared queue's runs go on" : "; requests are served",
    );
  });
});
