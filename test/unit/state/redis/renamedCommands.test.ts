import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { commandOptions, connectRedis } from "../../../../src/io/state/redis/connection.js";
import { NEEDED_COMMANDS } from "../../../../src/io/state/redis/renamedCommands.js";
import { startTestRedis } from "../../../helpers/redis.js";

/**
 * A Redis whose redis.conf renames commands away (`rename-command DEL ""`, as hardening guides advise for
 * DEL, PEXPIRE, RENAME, SREM, EVAL …): the commands svc's scripts and its run queue (BullMQ) use fail at
 * every request, which would be answered 503 while the gateway ran as if all were well.
 */
describe("a Redis with commands svc needs renamed away", { timeout: 30_000 }, () => {
  it("refuses the start naming each command and the fix, not 503 to every request", async () => {
    const own = await startTestRedis({
      args: [
        ...["--rename-command", "DEL", ""],
        ...["--rename-command", "PEXPIRE", "PEXPIRE_b81f"],
        ...["--rename-command", "EVAL", ""],
        // Renamed by the same guides, and used by neither svc nor BullMQ: not named.
        ...["--rename-command", "FLUSHALL", ""],
        ...["--rename-command", "KEYS", ""],
      ],
    });
    try {
      const refused = connectRedis(own.url, "/home/x/config.yaml", commandOptions(), "svc");
      await expect(refused).rejects.toThrow(
        /^\/home\/x\/config\.yaml: state\.redis_url: redis:\/\/127\.0\.0\.1:\d+\/0 does not run DEL, EVAL and PEXPIRE \(renamed away: rename-command in its redis\.conf\) — svc's own scripts and its run queue \(BullMQ\) use them: take them out of the rename-command lines of its redis\.conf$/,
      );
    } finally {
      await own.cleanup();
    }
  });

  it("lists every command BullMQ's scripts and svc's own scripts call", () => {
    const called = new Set<string>();
    const bullmq = join("node_modules", "bullmq", "dist", "cjs", "commands");
    for (const dir of [bullmq, join(bullmq, "includes")])
      for (const file of readdirSync(dir).filter((f) => f.endsWith(".lua")))
        for (const [, name] of readFileSync(join(dir, file), "utf8").matchAll(/rcall\("(\w+)"/g))
          called.add((name as string).toUpperCase());
    const own = join("src", "io", "state", "redis");
    for (const file of readdirSync(own).filter((f) => f.endsWith(".ts")))
      for (const [, name] of readFileSync(join(own, file), "utf8").matchAll(/redis\.call\('(\w+)'/g))
        called.add((name as string).toUpperCase());
    expect(called.size).toBeGreaterThan(20);
    // LPOS (Redis 6.0.6) is called only by getStateV2, which BullMQ uses only on a Redis that has it.
    expect(called.has("LPOS")).toBe(true);
    called.delete("LPOS");
    expect([...called].filter((name) => !NEEDED_COMMANDS.includes(name))).toEqual([]);
  });
});
