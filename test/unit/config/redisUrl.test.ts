import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { redisUrlProblem } from "../../../src/config/sections/state.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

describe("state.redis_url", () => {
  it.each([
    "redis://127.0.0.1:6379/0",
    "redis://127.0.0.1:6379",
    "redis://127.0.0.1:6379/",
    "rediss://:pw@cache.example.com:6380/3",
    "redis://127.0.0.1:6379?db=2",
    "redis://127.0.0.1:6379/2?db=2",
    // A URL's scheme is case-insensitive (RFC 3986 3.1), and Redis's client reads it so.
    "REDIS://127.0.0.1:6379/0",
    "Rediss://cache.example.com:6380/1",
    // A unix socket, as Redis's client reads it.
    "redis://localhost/2?path=/run/redis/redis.sock",
  ])("takes %s", (url) => {
    expect(redisUrlProblem(url)).toBeUndefined();
  });

  it.each([
    ["redis://127.0.0.1:6379/abc", /the database \(the URL's path after the port\) is not a number/],
    ["redis://127.0.0.1:6379/-1", /is not a number/],
    ["redis://127.0.0.1:6379/0/x", /is not a number/],
    ["redis://127.0.0.1:6379?db=x", /the database \(\?db=\) is not a number/],
    [
      "redis://127.0.0.1:6379/2?db=3",
      /names two databases \(the path's 2 and \?db=3; the path's would be used\)/,
    ],
    [
      "redis://127.0.0.1:6379/2?db=x",
      /names two databases \(the path's 2 and \?db=…; the path's would be used\)/,
    ],
    ["redis://127.0.0.1:99999/0", /not a valid URL \(check the host and that the port is 1-65535\)/],
    ["http://127.0.0.1:6379/0", /not a redis:\/\/ or rediss:\/\/ URL/],
    ...[
      "unix:///run/redis/redis.sock",
      "redis+unix:///run/redis/redis.sock?db=2",
      "/run/redis/redis.sock",
      // A socket's path where the database goes: no host (as unix:// writes it), or a file ending in .sock.
      "redis:///run/redis/redis.sock",
      "redis://:pw@/run/redis/redis.sock",
      "redis://localhost/var/run/redis.sock",
    ].map((url): [string, RegExp] => [
      url,
      /^a unix socket is given as \?path= of a redis:\/\/ URL — write it as redis:\/\/localhost\/0\?path=\/run\/redis\/redis\.sock \(the database's number after localhost\/\)$/,
    ]),
    [
      "redis://:50%off-pw-4f1c@127.0.0.1:6379/0",
      /^the user or password holds a % that is not followed by two hex digits — write a % in them as %25 \(and @ : \/ \? # as %40 %3A %2F %3F %23\)$/,
    ],
  ])("refuses %s (ioredis would send SELECT NaN, rejected unhandled)", (url, problem) => {
    expect(redisUrlProblem(url)).toMatch(problem);
  });

  it("an unset ${VAR} (its literal text is no URL) is named, with where to set it", () => {
    home = tempHome();
    home.write("config.yaml", "state:\n  backend: redis\n  redis_url: $" + "{REDIS_URL}\n");
    expect(() => loadConfig({ home: (home as TempHome).dir, env: {} })).toThrow(
      /state\.redis_url: \$\{REDIS_URL\} is not set — set REDIS_URL \(redis:\/\/host:6379\/0\) in the \.env beside config\.yaml or the environment/,
    );
    expect(
      loadConfig({ home: (home as TempHome).dir, env: { REDIS_URL: "redis://127.0.0.1:6379/0" } }).config
        .state.redis_url,
    ).toBe("redis://127.0.0.1:6379/0");
  });

  it.each([
    // A password as base64 writes it (Azure Cache for Redis's keys, openssl rand -base64): its / ends the host.
    "rediss://:Zm9v/YmFy+cXV4=@cache.example.net:6380/0",
    // Its part before the / reads as a host and port, the rest as the path: no "database is not a number".
    "redis://default:6379/x2@127.0.0.1:6379/0",
    "redis://:se#cret@127.0.0.1:6379/0",
    "redis://app:what?now@127.0.0.1:6379/0",
  ])("a user or password holding / ? or # unencoded (%s) is named as such, never quoted", (url) => {
    const problem = redisUrlProblem(url);
    expect(problem).toBe(
      "the user or password holds a / ? or # that is not percent-encoded, where the URL's user and password end — write them as %2F %3F %23 in the user and password (and @ : % as %40 %3A %25)",
    );
    expect(problem).not.toMatch(/YmFy|cret|what|x2/);
  });

  it("a / in a unix socket's path with an @ in it is no password", () => {
    expect(redisUrlProblem("redis://localhost/0?path=/run/user@1000/redis.sock")).toBeUndefined();
  });

  it("is refused where config.yaml is loaded, naming the key and never quoting the URL", () => {
    home = tempHome();
    home.write("config.yaml", 'state: {backend: redis, redis_url: "redis://:s3cret@127.0.0.1:6379/abc"}\n');
    const load = () => loadConfig({ home: (home as TempHome).dir, env: {} });
    expect(load).toThrow(
      /state\.redis_url: the database .* is not a number — write it as redis:\/\/host:6379\/0/,
    );
    expect(load).not.toThrow(/s3cret/);
  });
});
