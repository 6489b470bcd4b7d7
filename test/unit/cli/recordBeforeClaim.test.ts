import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { svcPaths } from "../../../src/config/paths.js";
import {
  forgetRecordBeforeClaim,
  gatewayStateFile,
  recordBeforeClaim,
  recordClaim,
  restoreRecordBeforeClaim,
} from "../../../src/io/gatewayState.js";
import { pidNamespace } from "../../../src/io/pidNamespace.js";
import { UNSHARE } from "../../helpers/container.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * A start writes its claim ({pid, pid_namespace}) over gateway.json as it claims gateway.pid. It keeps the
 * record it wrote over, and a start that ends before it listens puts it back, only when that record is
 * another PID namespace's gateway's (a container's, whose pid this process cannot check): a record of this
 * namespace that the claim was written over is a dead gateway's (a SIGKILLed one whose gateway.pid was
 * removed), which the failed start removes. Once the start has written its whole record, nothing is put back.
 */

const OTHER_NAMESPACE = "pid:[4026530000]";
let home: TempHome;
beforeEach(() => {
  home = tempHome();
});
afterEach(() => {
  forgetRecordBeforeClaim();
  home.cleanup();
});

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  return child.pid as number;
}

function recordOf(pid: number, namespace: string | undefined) {
  return {
    pid,
    host: "127.0.0.1",
    port: 45_678,
    started_at: "2026-12-01T10:00:00.000Z",
    ...(namespace === undefined ? {} : { pid_namespace: namespace }),
    instance: "9913b641-0000-4000-8000-000000000000",
  };
}

const read = (file: string): unknown => JSON.parse(readFileSync(file, "utf8"));

describe.skipIf(pidNamespace() === undefined)("the record a start's claim is written over", () => {
  it.each([
    ["of this PID namespace", true],
    ["without a PID namespace (an older svc's)", false],
  ])(
    "%s, a dead gateway's, is not kept: a start that ends before it listens puts nothing back",
    (_, named) => {
      const paths = svcPaths(home.dir);
      const stateFile = gatewayStateFile(paths);
      writeFileSync(stateFile, JSON.stringify(recordOf(deadPid(), named ? pidNamespace() : undefined)));
      recordClaim(paths);
      expect(read(stateFile)).toEqual({ pid: process.pid, pid_namespace: pidNamespace() });
      expect(recordBeforeClaim(stateFile)).toBeUndefined();
      expect(restoreRecordBeforeClaim(stateFile)).toBe(false);
      expect(read(stateFile)).toEqual({ pid: process.pid, pid_namespace: pidNamespace() });
    },
  );

  it("of another PID namespace's gateway is kept, and put back by a start that ends before it listens", () => {
    const paths = svcPaths(home.dir);
    const stateFile = gatewayStateFile(paths);
    const record = recordOf(1, OTHER_NAMESPACE);
    writeFileSync(stateFile, JSON.stringify(record));
    recordClaim(paths);
    expect(recordBeforeClaim(stateFile)).toMatchObject({ pid: 1, port: 45_678 });
    expect(restoreRecordBeforeClaim(stateFile)).toBe(true);
    expect(read(stateFile)).toEqual(record);
  });

  it("of another PID namespace's gateway is forgotten once the start has written its whole record", () => {
    const paths = svcPaths(home.dir);
    const stateFile = gatewayStateFile(paths);
    writeFileSync(stateFile, JSON.stringify(recordOf(1, OTHER_NAMESPACE)));
    recordClaim(paths);
    const whole = { ...recordOf(process.pid, pidNamespace()), port: 45_679 };
    writeFileSync(stateFile, JSON.stringify(whole));
    forgetRecordBeforeClaim();
    expect(recordBeforeClaim(stateFile)).toBeUndefined();
    expect(restoreRecordBeforeClaim(stateFile)).toBe(false);
    expect(read(stateFile)).toEqual(whole);
  });
});

/**
 * A start as pid 1 of a PID namespace of its own (a container's, `unshare --pid` standing in for it) claims
 * gateway.pid, writes its claim over `gateway.json` and ends before it listens, printing what it put back.
 */
function claimInContainer(dir: string): { restored: boolean; namespace: string } {
  const src = (path: string) =>
    JSON.stringify(pathToFileURL(join(import.meta.dirname, "../../../src", path)).href);
  const script = `
    const { svcPaths } = await import(${src("config/paths.ts")});
    const state = await import(${src("io/gatewayState.ts")});
    const { pidNamespace } = await import(${src("io/pidNamespace.ts")});
    if (process.pid !== 1) throw new Error("not pid 1: " + process.pid);
    const paths = svcPaths(process.env.SVC_HOME);
    state.recordClaim(paths);
    const restored = state.restoreRecordBeforeClaim(state.gatewayStateFile(paths));
    console.log(JSON.stringify({ restored, namespace: pidNamespace() }));
  `;
  const child = spawnSync(
    "unshare",
    [
      "--pid",
      "--fork",
      "--mount-proc",
      process.execPath,
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      script,
    ],
    { env: { PATH: process.env.PATH ?? "", HOME: dir, SVC_HOME: dir }, encoding: "utf8", timeout: 60_000 },
  );
  if (child.status !== 0) throw new Error(`claim in a container: ${child.status} ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split("\n").at(-1) as string);
}

describe.runIf(UNSHARE && pidNamespace() !== undefined)("a start's claim as pid 1 of a PID namespace", () => {
  it("keeps another namespace's gateway's record of pid 1 (two containers' gateways), and puts it back as it ends before it listens", () => {
    const paths = svcPaths(home.dir);
    const stateFile = gatewayStateFile(paths);
    // The first container's gateway, pid 1 in its namespace, still serving.
    const record = recordOf(1, OTHER_NAMESPACE);
    writeFileSync(stateFile, JSON.stringify(record));
    const claimed = claimInContainer(home.dir);
    expect(claimed.namespace).not.toBe(OTHER_NAMESPACE);
    expect(claimed.namespace).not.toBe(pidNamespace());
    expect(claimed.restored).toBe(true);
    expect(read(stateFile)).toEqual(record);
  });
});
