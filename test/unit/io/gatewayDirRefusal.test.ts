import { accessSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gatewayDirProblem } from "../../../src/io/homeWritable.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

/** The refusal of `<home>/state` whose write check failed with `code`. */
function stateRefused(code: string): string | undefined {
  home = tempHome();
  const state = join(home.dir, "state");
  mkdirSync(state, { recursive: true });
  // A read-only mount or a full disk needs root to stage, and root passes every access check.
  return gatewayDirProblem(home.dir, (path, mode) => {
    if (path === state) throw Object.assign(new Error(`${code}: refused, access '${state}'`), { code });
    accessSync(path, mode);
  });
}

const said = (code: string, fix: string) =>
  `${join(home.dir, "state")}: cannot be written (${code}: refused, access '${join(home.dir, "state")}') — the gateway keeps its journal of accepted runs there: ${fix}`;

describe("a directory of SVC_HOME the gateway cannot write, by why it cannot", () => {
  it("on a read-only file system: remount it read-write, not a change of owner or permissions", () => {
    expect(stateRefused("EROFS")).toBe(
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
