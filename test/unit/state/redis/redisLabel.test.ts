import { describe, expect, it } from "vitest";
import { redisLabel } from "../../../../src/io/state/redis/connection.js";

describe("redisLabel: state.redis_url as messages and logs show it", () => {
  it("leaves out the userinfo", () => {
    expect(redisLabel("redis://alice:s3cretPW@127.0.0.1:6379/2")).toBe("redis://127.0.0.1:6379/2");
    expect(redisLabel("rediss://:s3cretPW@redis.example.com:6380/0")).toBe(
      "rediss://redis.example.com:6380/0",
    );
  });

  it("never shows a password given as a query option, which ioredis connects with", () => {
    const label = redisLabel("redis://127.0.0.1:6379/0?db=1&password=s3cretPW&username=alice&family=4");
    expect(label).not.toContain("s3cretPW");
    expect(label).toBe("redis://127.0.0.1:6379/0?db=1&password=[redacted]&username=[redacted]&family=4");
    expect(redisLabel("redis://h/0?sentinelPassword=s3cretPW")).toBe(
      "redis://h/0?sentinelPassword=[redacted]",
    );
    expect(redisLabel("redis://h/0?PASSWORD=a%26b")).toBe("redis://h/0?PASSWORD=[redacted]");
  });

  it("keeps the other options and drops the fragment", () => {
    expect(redisLabel("redis://h:6379/0?db=x")).toBe("redis://h:6379/0?db=x");
    // A unix socket's path reads as written.
    expect(redisLabel("redis://localhost/3?path=/run/redis/redis.sock")).toBe(
      "redis://localhost/3?path=/run/redis/redis.sock",
    );
    expect(redisLabel("redis://h:6379/0#s3cretPW")).toBe("redis://h:6379/0");
  });

  it("an unparseable URL is not quoted", () => {
    expect(redisLabel("redis://:s3cretPW@[::1/0")).toBe("redis (unparseable URL)");
  });
});
