import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { assertHomeWritable, gatewayDirProblem } from "../../../src/io/homeWritable.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/** The path whose write check fails, and the code it fails with (a read-only mount needs root to make). */
const refusal = vi.hoisted(() => ({ path: undefined as string | undefined, code: "" }));

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const accessSync: typeof real.accessSync = (path, mode) => {
    if (refusal.path !== undefined && String(path) === refusal.path)
      throw Object.assign(new Error(`${refusal.code}: refused, access '${refusal.path}'`), {
        code: refusal.code,
      });
    real.accessSync(path, mode);
  };
  return { ...real, accessSync, default: { ...real, accessSync } };
});

let home: TempHome;
afterEach(() => {
  refusal.path = undefined;
  home.cleanup();
});

/** The refusal of `<home>/state` whose write check failed with `code`. */
function stateRefused(code: string): string | undefined {
  home = tempHome();
  const state = join(home.dir, "state");
  mkdirSync(state, { recursive: true });
  Object.assign(refusal, { path: state, code });
  return gatewayDirProblem(home.dir);
}

const said = (code: string, fix: string) =>
  `${join(home.dir, "state")}: cannot be written (${code}: refused, access '${join(home.dir, "state")}') — the gateway keeps its journal of accepted runs there: ${fix}`;

describe("a directory of SVC_HOME the gateway cannot write, by why it cannot", () => {
  it("on a read-only file system: remount it read-write, not a change of owner or permissions", () => {
    expect(stateRefused("EROFS")).toBe(
      said("EROFS", "it is on a read-only file system: remount it read-write"),
    );
    expect(() => assertHomeWritable(home.dir)).toThrow(
      said("EROFS", "it is on a read-only file system: remount it read-write"),
    );
  });

  it("on a full disk: free space", () => {
    expect(stateRefused("ENOSPC")).toBe(said("ENOSPC", "free disk space (or raise the user's quota)"));
  });

  it("refused to this user: its owner or permissions, as before", () => {
    expect(stateRefused("EACCES")).toBe(said("EACCES", "fix its owner or permissions"));
  });
});
