import { readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { pidNamespace } from "../../../src/io/pidNamespace.js";
import { FOREIGN_UNTOUCHED_MS } from "../../../src/io/stores/fileLock.js";
import { type TempHome, tempHome, tempPath } from "../../helpers/home.js";
import { CLI_NODE_ARGS, MAIN, runNode, type SvcResult } from "./svc.js";

/**
 * A store's lock left by a CLI command killed in a container that shared this SVC_HOME (another PID
 * namespace, gone with it) while several commands here wait to write that store: each watches the lock
 * FOREIGN_UNTOUCHED_MS, past its own 10 s wait, then one of them takes it over. The others had waited
 * their 10 s by then; counted from their start, they all gave up at once (lock_timeout, "remove the file if
 * no svc is running"), and their records were lost. Their wait counts from the takeover.
 */

const MARK_WAITS = join(import.meta.dirname, "../../helpers/markLockWaits.mjs");
const STEPPED_PERFORMANCE = join(import.meta.dirname, "../../helpers/steppedPerformance.mjs");

let home: TempHome;
afterEach(() => home.cleanup());

/** What the command itself wrote on stderr (not the preload's marks). */
const ownLines = (stderr: string) =>
  stderr
    .split("\n")
    .filter((line) => !line.startsWith("[test] "))
    .join("\n");

describe.runIf(pidNamespace() !== undefined)(
  "writers waiting for a store lock left by a killed container",
  { timeout: 120_000 },
  () => {
    it("all write once one of them takes it over (svc webhook subscribe, waiting asynchronously; svc mcp add, blocking), every record kept", async () => {
      home = tempHome();
      const subscriptions = join(home.dir, "webhook_subscriptions.json");
      const config = join(home.dir, "config.yaml");
      writeFileSync(
        config,
        "platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    port: 8644\nmcp_servers: {}\n",
        { mode: 0o600 },
      );
      // Its namespace is gone: nothing touches the lock any more.
      const gone = pidNamespace() === "pid:[4026539999]" ? "pid:[4026539998]" : "pid:[4026539999]";
      for (const store of [subscriptions, config])
        writeFileSync(`${store}.lock`, `4242 - deadbeefdeadbeef ${gone}`);
      // The commands' monotonic clock, stepped past FOREIGN_UNTOUCHED_MS once they all wait.
      const step = tempPath("svc-performance-step");
      const names = ["one", "two", "three"];
      const commands = names.flatMap((name) => [
        ["webhook", "subscribe", `sub-${name}`],
        ["mcp", "add", `server-${name}`, "--", "node", `/srv/${name}.js`],
      ]);
      let allWaiting: () => void = () => {};
      const waited = new Promise<void>((resolve) => (allWaiting = resolve));
      const waiting = new Set<number>();
      const runs: Promise<SvcResult>[] = commands.map((args, i) =>
        runNode(
          home,
          [...CLI_NODE_ARGS, "--import", MARK_WAITS, "--import", STEPPED_PERFORMANCE, MAIN, ...args],
          {
            // Marked at a wait's second attempt: its first look at the lock is over before the step.
            env: { SVC_TEST_PERFORMANCE_STEP_FILE: step, SVC_TEST_MARK_WAITS_AT: "2" },
            timeoutMs: 100_000,
            onStderr: (chunk) => {
              if (!chunk.includes("[test] waiting ")) return;
              waiting.add(i);
              if (waiting.size === commands.length) allWaiting();
            },
          },
        ),
      );
      await Promise.race([waited, Promise.all(runs)]);
      // Whole at every read (a read of the file half written would step the clock back).
      writeFileSync(`${step}.new`, String(FOREIGN_UNTOUCHED_MS));
      renameSync(`${step}.new`, step);
      const results = await Promise.all(runs);
      for (const [i, result] of results.entries())
        expect([commands[i], result.code, ownLines(result.stderr)]).toEqual([commands[i], 0, ""]);

      const records = JSON.parse(readFileSync(subscriptions, "utf8")) as Record<string, unknown>;
      expect(Object.keys(records).sort()).toEqual(names.map((name) => `sub-${name}`).sort());
      const servers = (parse(readFileSync(config, "utf8")) as { mcp_servers: Record<string, unknown> })
        .mcp_servers;
      expect(Object.keys(servers).sort()).toEqual(names.map((name) => `server-${name}`).sort());
      expect(readdirSync(home.dir).sort()).toEqual(["config.yaml", "webhook_subscriptions.json"]);
    });
  },
);
