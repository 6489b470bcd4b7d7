import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { CLI_NODE_ARGS, MAIN, runNode, type SvcResult, svc } from "./svc.js";

const MARK_READS = join(import.meta.dirname, "../../helpers/markStoreReads.mjs");

let home: TempHome;
afterEach(() => home.cleanup());

const storePath = () => join(home.dir, "webhook_subscriptions.json");
const stored = () => JSON.parse(readFileSync(storePath(), "utf8"));

/**
 * Runs the commands as separate processes that all read the store before any of them may write: the test
 * holds the store's lock until each has read it (a preload marks each read on stderr), then lets them all
 * write.
 */
async function afterAllRead(commands: readonly (readonly string[])[]): Promise<SvcResult[]> {
  const lock = `${storePath()}.lock`;
  writeFileSync(lock, String(process.pid));
  let release: () => void = () => {};
  const allRead = new Promise<void>((resolve) => (release = resolve));
  const read = new Set<number>();
  const runs = commands.map((args, i) =>
    runNode(home, [...CLI_NODE_ARGS, "--import", MARK_READS, MAIN, "webhook", ...args], {
      onStderr: (chunk) => {
        if (!chunk.includes("[test] read ") || read.has(i)) return;
        read.add(i);
        if (read.size === commands.length) release();
      },
    }),
  );
  await allRead;
  rmSync(lock);
  return Promise.all(runs);
}

describe("svc webhook from two processes at once (spec 2.6): no record is lost, no command refused", {
  timeout: 90_000,
}, () => {
  it("two concurrent subscribes of different names both succeed and both records are stored (0600)", async () => {
    home = tempHome();
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1" } } }));
    const results = await afterAllRead([
      ["subscribe", "one", "--prompt", "first"],
      ["subscribe", "two", "--prompt", "second"],
    ]);
    for (const r of results)
      expect(r).toMatchObject({ code: 0, stdout: expect.stringContaining("Subscribed") });
    expect(stored()).toMatchObject({ one: { prompt: "first" }, two: { prompt: "second" } });
    expect(statSync(storePath()).mode & 0o777).toBe(0o600);
  });

  it("a subscribe and a remove of another name at once both take effect", async () => {
    home = tempHome();
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1" } } }));
    expect((await svc(home, ["webhook", "subscribe", "old"])).code).toBe(0);
    const [added, removed] = await afterAllRead([
      ["subscribe", "new"],
      ["remove", "old"],
    ]);
    expect(added?.code).toBe(0);
    expect(removed).toMatchObject({ code: 0, stdout: "Removed old\n" });
    expect(Object.keys(stored())).toEqual(["new"]);
  });

  it("two concurrent updates of the same name: one wins, the other is refused and asked to run again", async () => {
    home = tempHome();
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1" } } }));
    expect((await svc(home, ["webhook", "subscribe", "gh"])).code).toBe(0);
    const results = await afterAllRead([
      ["subscribe", "gh", "--prompt", "a"],
      ["subscribe", "gh", "--prompt", "b"],
    ]);
    const codes = results.map((r) => r.code).sort();
    expect(codes).toEqual([0, 1]);
    const refused = results.find((r) => r.code !== 0);
    expect(refused?.stderr).toContain("changed since it was read — run the command again");
    const winner = results.find((r) => r.code === 0);
    expect(stored().gh.prompt).toBe(winner === results[0] ? "a" : "b");
  });
});
