import { spawn, spawnSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { processStartTime } from "../../../src/io/processAlive.js";
import { processGroupFiles, stopOrphanGroups } from "../../../src/io/processGroups.js";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { signalGroup } from "../../helpers/process.js";

const dirs: string[] = [];
const leaders: number[] = [];
afterEach(() => {
  for (const pid of leaders.splice(0)) signalGroup(pid, "SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function groupsDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "svc-groups-"));
  dirs.push(dir);
  return join(dir, "agents");
}

/** A process group led by a `sleep`, as an agent's. */
function leader(): number {
  const child = spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
  child.unref();
  leaders.push(child.pid as number);
  return child.pid as number;
}

const running = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") === false;
  } catch {
    return false;
  }
};

/** The note a process that is gone (pid 2^22 - 1 is above Linux's pid_max default) left for `pid`. */
function noteFromGoneOwner(dir: string, pid: number, start = processStartTime(pid)): void {
  mkdirSync(dir, { recursive: true });
  // In place of a note this process made (a link: writing through it would write its target).
  rmSync(join(dir, String(pid)), { force: true });
  writeFileSync(join(dir, String(pid)), `${start} 4194303 12345\n`);
}

describe("agent process groups left by a gateway that is gone", () => {
  it("notes a group while it runs and forgets it when it ended", () => {
    const dir = groupsDir();
    const groups = processGroupFiles(dir);
    const pid = leader();
    groups.started(pid);
    expect(readlinkSync(join(dir, String(pid)))).toBe(
      `${processStartTime(pid)} ${process.pid} ${processStartTime(process.pid)}`,
    );
    groups.ended(pid);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("notes a group after its directory was removed while the gateway ran (rm -rf state/): made again", () => {
    const dir = groupsDir();
    const groups = processGroupFiles(dir);
    const first = leader();
    groups.started(first);
    rmSync(dir, { recursive: true, force: true });
    const second = leader();
    groups.started(second);
    expect(readdirSync(dir)).toEqual([String(second)]);
  });

  it("stops a group whose noting process is gone, and only that one", async () => {
    const dir = groupsDir();
    const orphan = leader();
    const ours = leader();
    processGroupFiles(dir).started(ours);
    noteFromGoneOwner(dir, orphan);
    expect(stopOrphanGroups(dir)).toBe(1);
    await expect.poll(() => running(orphan), { timeout: 10_000 }).toBe(false);
    // Its noting process (this one) runs: another svc command's agent is not touched.
    expect(running(ours)).toBe(true);
    expect(readdirSync(dir)).toEqual([String(ours)]);
  });

  it("names a stopped group whose run is not journaled (a scheduled cron run), not one that runs again", async () => {
    const dir = groupsDir();
    const scheduled = leader();
    const fired = leader();
    const groups = processGroupFiles(dir);
    groups.started(scheduled, "cron:nightly-digest");
    groups.started(fired);
    expect(readlinkSync(join(dir, String(scheduled)))).toBe(
      `${processStartTime(scheduled)} ${process.pid} ${processStartTime(process.pid)} cron:nightly-digest`,
    );
    // Both as a gateway that is gone left them.
    noteFromGoneOwner(dir, fired);
    rmSync(join(dir, String(scheduled)));
    writeFileSync(
      join(dir, String(scheduled)),
      `${processStartTime(scheduled)} 4194303 12345 cron:nightly-digest\n`,
    );
    const notRunAgain: string[] = [];
    expect(stopOrphanGroups(dir, (name) => notRunAgain.push(name))).toBe(2);
    expect(notRunAgain).toEqual(["cron:nightly-digest"]);
    await expect.poll(() => running(scheduled), { timeout: 10_000 }).toBe(false);
    await expect.poll(() => running(fired), { timeout: 10_000 }).toBe(false);
  });

  it("notes a tool's group (a stdio MCP server, a terminal command) and tells it apart from the runs when stopped", async () => {
    const dir = groupsDir();
    const server = leader();
    const command = leader();
    const groups = processGroupFiles(dir, "local");
    groups.toolStarted(server, "mcp:my server", "work");
    groups.toolStarted(command, "tool:terminal");
    // A server's name may hold a space, which separates a note's fields.
    expect(readlinkSync(join(dir, String(server)))).toBe(
      `${processStartTime(server)} ${process.pid} ${processStartTime(process.pid)} mcp:my%20server profile=work`,
    );
    for (const pid of [server, command]) {
      const text = readlinkSync(join(dir, String(pid))).split(" ");
      rmSync(join(dir, String(pid)));
      writeFileSync(join(dir, String(pid)), [text[0], "4194303", "12345", ...text.slice(3)].join(" "));
    }
    const tools: string[] = [];
    const other: string[] = [];
    const stopped = stopOrphanGroups(
      dir,
      (name) => other.push(name),
      (owner) => other.push(owner),
      (tool, profile) => tools.push(profile === undefined ? tool : `${tool} of ${profile}`),
    );
    expect(stopped).toBe(2);
    expect(tools.sort()).toEqual(["mcp:my server of work", "tool:terminal"]);
    expect(other).toEqual([]);
    await expect.poll(() => running(server), { timeout: 10_000 }).toBe(false);
    await expect.poll(() => running(command), { timeout: 10_000 }).toBe(false);
  });

  it("notes the backend a journaled run is kept in, and tells it for each group stopped (none for a note of an older svc, which did not say)", async () => {
    const dir = groupsDir();
    const [onRedis, onLocal, older, scheduled] = [leader(), leader(), leader(), leader()];
    const groups = processGroupFiles(dir, "redis");
    groups.started(onRedis);
    groups.started(scheduled, "cron:nightly-digest");
    const own = `${process.pid} ${processStartTime(process.pid)}`;
    expect(readlinkSync(join(dir, String(onRedis)))).toBe(`${processStartTime(onRedis)} ${own} run:redis`);
    // A run that is not journaled is named as before: its backend does not matter.
    expect(readlinkSync(join(dir, String(scheduled)))).toBe(
      `${processStartTime(scheduled)} ${own} cron:nightly-digest`,
    );
    // As a gateway that is gone left them.
    const gone = (pid: number, label: string) => {
      rmSync(join(dir, String(pid)), { force: true });
      writeFileSync(join(dir, String(pid)), `${processStartTime(pid)} 4194303 12345${label}\n`);
    };
    gone(onRedis, " run:redis");
    gone(onLocal, " run:local");
    gone(older, "");
    gone(scheduled, " cron:nightly-digest");
    const notRunAgain: string[] = [];
    const backends: Array<string | undefined> = [];
    expect(
      stopOrphanGroups(
        dir,
        (name) => notRunAgain.push(name),
        (owner, backend) => {
          expect(owner).toBe("4194303 12345");
          backends.push(backend);
        },
      ),
    ).toBe(4);
    expect(notRunAgain).toEqual(["cron:nightly-digest"]);
    expect(backends.sort()).toEqual(["local", "redis", undefined]);
    for (const pid of [onRedis, onLocal, older])
      await expect.poll(() => running(pid), { timeout: 10_000 }).toBe(false);
  });

  it("notes a named profile's cron run with its profile and tells it back; a note without one (an older svc's) names none", async () => {
    const dir = groupsDir();
    const named = leader();
    const older = leader();
    processGroupFiles(dir).started(named, "cron:nightly", "work");
    expect(readlinkSync(join(dir, String(named)))).toBe(
      `${processStartTime(named)} ${process.pid} ${processStartTime(process.pid)} cron:nightly profile=work`,
    );
    // Both as a gateway that is gone left them.
    for (const [pid, label] of [
      [named, "cron:nightly profile=work"],
      [older, "cron:nightly"],
    ] as const) {
      rmSync(join(dir, String(pid)), { force: true });
      writeFileSync(join(dir, String(pid)), `${processStartTime(pid)} 4194303 12345 ${label}\n`);
    }
    const told: Array<[string, string | undefined]> = [];
    expect(stopOrphanGroups(dir, (name, profile) => told.push([name, profile]))).toBe(2);
    expect(told.sort((a, b) => String(a[1]).localeCompare(String(b[1])))).toEqual([
      ["cron:nightly", undefined],
      ["cron:nightly", "work"],
    ]);
    await expect.poll(() => running(named), { timeout: 10_000 }).toBe(false);
    await expect.poll(() => running(older), { timeout: 10_000 }).toBe(false);
  });

  it("leaves a process alone whose pid was reused (another start time), and forgets the note", () => {
    const dir = groupsDir();
    const other = leader();
    noteFromGoneOwner(dir, other, "1");
    expect(stopOrphanGroups(dir)).toBe(0);
    expect(running(other)).toBe(true);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("stops the group of a whole note still under its temporary name (the gateway was killed before renaming it)", async () => {
    const dir = groupsDir();
    const orphan = leader();
    noteFromGoneOwner(dir, orphan);
    renameSync(join(dir, String(orphan)), join(dir, `.${orphan}.tmp`));
    expect(stopOrphanGroups(dir)).toBe(1);
    await expect.poll(() => running(orphan), { timeout: 10_000 }).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("leaves alone the part of a note another svc command is writing, and the group it names", () => {
    const dir = groupsDir();
    const ours = leader();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `.${ours}.tmp`), `${processStartTime(ours)} `);
    expect(stopOrphanGroups(dir)).toBe(0);
    expect(running(ours)).toBe(true);
    expect(readdirSync(dir)).toEqual([`.${ours}.tmp`]);
  });

  it("stops the group of a process killed in the middle of noting it (its note's first write made, the rest not)", async () => {
    const dir = groupsDir();
    const orphan = leader();
    const module = pathToFileURL(svcModule("io/processGroups.js")).href;
    // A process that notes the group and is killed at the worst moment (test/helpers/killAtNote.mjs).
    const noted = spawnSync(
      process.execPath,
      [
        ...[...CLI_NODE_ARGS, "--import", join(import.meta.dirname, "../../helpers/killAtNote.mjs")],
        ...[
          "--input-type=module",
          "-e",
          `(await import(${JSON.stringify(module)})).processGroupFiles(${JSON.stringify(dir)}).started(${orphan});`,
        ],
      ],
      { stdio: "ignore" },
    );
    expect(noted.signal).toBe("SIGKILL");
    expect(stopOrphanGroups(dir)).toBe(1);
    await expect.poll(() => running(orphan), { timeout: 10_000 }).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("writes a note under the group's name only whole, and leaves no temporary file", () => {
    const dir = groupsDir();
    const groups = processGroupFiles(dir);
    const pid = leader();
    groups.started(pid);
    expect(readdirSync(dir)).toEqual([String(pid)]);
    groups.ended(pid);
    expect(readdirSync(dir)).toEqual([]);
  });
});
