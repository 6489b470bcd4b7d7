import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { CLI_NODE_ARGS, MAIN, runNode, type SvcResult } from "./svc.js";

const MARK_WAITS = join(import.meta.dirname, "../../helpers/markLockWaits.mjs");

let home: TempHome;
afterEach(() => home.cleanup());

/**
 * Runs the commands as separate processes while the test holds `locks` (as another svc process would),
 * lets go once every command waits for one of them, so they all contend for the stores at once. Few
 * commands: the first one waits until the last one has started (a lock is waited for 10 s at most).
 */
async function allAtOnce(locks: readonly string[], commands: readonly (readonly string[])[]) {
  for (const lock of locks) writeFileSync(lock, String(process.pid));
  let release: () => void = () => {};
  const allWaiting = new Promise<void>((resolve) => (release = resolve));
  const waiting = new Set<number>();
  const runs: Promise<SvcResult>[] = commands.map((args, i) =>
    runNode(home, [...CLI_NODE_ARGS, "--import", MARK_WAITS, MAIN, ...args], {
      onStderr: (chunk) => {
        if (!chunk.includes("[test] waiting ")) return;
        waiting.add(i);
        if (waiting.size === commands.length) release();
      },
    }),
  );
  await Promise.race([allWaiting, Promise.all(runs)]);
  for (const lock of locks) rmSync(lock);
  return Promise.all(runs);
}

/** What the command itself wrote on stderr (not the preload's marks). */
const ownLines = (stderr: string) =>
  stderr
    .split("\n")
    .filter((line) => !line.startsWith("[test] "))
    .join("\n");

describe("cron jobs and config.yaml written by many svc processes at once", { timeout: 120_000 }, () => {
  it("keep every job and every server each command reported, in whole files (0600), with no temp or lock file left", async () => {
    home = tempHome();
    const jobs = join(home.dir, "cron", "jobs.json");
    const config = join(home.dir, "config.yaml");
    writeFileSync(config, "# kept-comment-marker\nmcp_servers: {}\n", { mode: 0o600 });
    const names = ["alpha", "bravo", "charlie"];
    const commands = names.flatMap((name) => [
      ["cron", "create", "--name", `job-${name}`, "--schedule", "every 15m", "--prompt", `run ${name}`],
      ["mcp", "add", `server-${name}`, "--", "node", `/srv/${name}.js`],
    ]);
    mkdirSync(join(home.dir, "cron"), { mode: 0o700 });
    const results = await allAtOnce([`${jobs}.lock`, `${config}.lock`], commands);
    for (const [i, result] of results.entries())
      expect([commands[i], result.code, ownLines(result.stderr)]).toEqual([commands[i], 0, ""]);

    const stored = JSON.parse(readFileSync(jobs, "utf8")) as { jobs: Record<string, { name: string }> };
    expect(
      Object.values(stored.jobs)
        .map((job) => job.name)
        .sort(),
    ).toEqual(names.map((n) => `job-${n}`));
    const text = readFileSync(config, "utf8");
    expect(text.startsWith("# kept-comment-marker")).toBe(true);
    const servers = (parse(text) as { mcp_servers: Record<string, { args: string[] }> }).mcp_servers;
    expect(Object.keys(servers).sort()).toEqual(names.map((n) => `server-${n}`));
    for (const name of names) expect(servers[`server-${name}`]?.args).toEqual([`/srv/${name}.js`]);
    for (const file of [jobs, config]) expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(home.dir).sort()).toEqual(["config.yaml", "cron"]);
    expect(readdirSync(join(home.dir, "cron"))).toEqual(["jobs.json"]);
  });
});
