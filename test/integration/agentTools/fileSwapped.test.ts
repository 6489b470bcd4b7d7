import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { AgentTool } from "../../../src/agent/tools/tool.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { toolContext } from "../../helpers/toolContext.js";

/**
 * A path swapped for a symlink between file_read's check and its read (a `terminal` command's background
 * process racing the run's own calls): the swap is made deterministic by running it right after the
 * check's realpath or stat of the file (file_read) or lstat of the directory (file_write) returns.
 */

type Swap = { path: string; swap: () => void };
const swaps = vi.hoisted(() => ({
  after: undefined as Swap | undefined,
  afterLstat: undefined as Swap | undefined,
  afterStat: undefined as Swap | undefined,
}));
vi.mock("node:fs/promises", async (original) => {
  const real = await original<typeof import("node:fs/promises")>();
  const realpath = async (...args: Parameters<typeof real.realpath>) => {
    const resolved = await real.realpath(...args);
    const due = swaps.after;
    if (due !== undefined && String(args[0]).endsWith(due.path)) {
      swaps.after = undefined;
      due.swap();
    }
    return resolved;
  };
  const lstat = async (...args: Parameters<typeof real.lstat>) => {
    const info = await real.lstat(...args);
    const due = swaps.afterLstat;
    if (due !== undefined && String(args[0]).endsWith(due.path)) {
      swaps.afterLstat = undefined;
      due.swap();
    }
    return info;
  };
  const stat = async (...args: Parameters<typeof real.stat>) => {
    const info = await real.stat(...args);
    const due = swaps.afterStat;
    if (due !== undefined && String(args[0]).endsWith(due.path)) {
      swaps.afterStat = undefined;
      due.swap();
    }
    return info;
  };
  return { ...real, realpath, lstat, stat, default: { ...real, realpath, lstat, stat } };
});

let fileTools: typeof import("../../../src/agent/tools/file.js").fileTools;
let createWorkspace: typeof import("../../../src/agent/tools/index.js").createWorkspace;
// Test files share their worker: the tools' modules another file loaded first hold the real fs/promises, so
// this file imports fresh copies after the mock, and leaves fresh ones with the real module to the next file.
beforeAll(async () => {
  vi.resetModules();
  ({ fileTools } = await import("../../../src/agent/tools/file.js"));
  ({ createWorkspace } = await import("../../../src/agent/tools/index.js"));
});
afterAll(() => {
  vi.resetModules();
});

let home: TempHome;
let workspace: string;
let outsideDir: string;
let read: AgentTool;
let write: AgentTool;
beforeEach(async () => {
  home = tempHome();
  workspace = await createWorkspace(home.dir, "d-1");
  outsideDir = join(home.dir, "outside");
  home.write("outside/secret.txt", "top secret");
  const tools = fileTools({ max_bytes: 100 });
  read = tools.find((tool) => tool.name === "file_read") as AgentTool;
  write = tools.find((tool) => tool.name === "file_write") as AgentTool;
});
afterEach(() => home.cleanup());

const fileRead = (path: string) => read.execute({ path }, toolContext({ workspace: async () => workspace }));

describe("file_read of a path swapped after its check", () => {
  it("refuses the file when the file itself became a symlink leading outside", async () => {
    fs.writeFileSync(join(workspace, "secret.txt"), "harmless");
    swaps.after = {
      path: "secret.txt",
      swap: () => {
        fs.rmSync(join(workspace, "secret.txt"));
        fs.symlinkSync(join(outsideDir, "secret.txt"), join(workspace, "secret.txt"));
      },
    };
    const outcome = await fileRead("secret.txt");
    expect(JSON.stringify(outcome)).not.toContain("top secret");
    expect(outcome).toEqual({
      ok: false,
      error: 'file_read: "secret.txt" changed while it was read (it is now a symlink) — refused',
    });
  });

  it("refuses the file when a directory of its path became a symlink leading outside", async () => {
    fs.mkdirSync(join(workspace, "sub"));
    fs.writeFileSync(join(workspace, "sub", "secret.txt"), "harmless");
    swaps.after = {
      path: join("sub", "secret.txt"),
      swap: () => {
        fs.renameSync(join(workspace, "sub"), join(workspace, "sub-old"));
        fs.symlinkSync(outsideDir, join(workspace, "sub"));
      },
    };
    const outcome = await fileRead("sub/secret.txt");
    expect(JSON.stringify(outcome)).not.toContain("top secret");
    expect(outcome).toEqual({
      ok: false,
      error: 'file_read: "sub/secret.txt" leads outside the workspace (a symlink) — refused',
    });
  });

  it("does not wait on a FIFO swapped in for the file: it is refused as not a file", async () => {
    fs.writeFileSync(join(workspace, "pipe"), "harmless");
    swaps.afterStat = {
      path: "pipe",
      swap: () => {
        fs.rmSync(join(workspace, "pipe"));
        // No writer ever opens it: an open that waits for one would never return.
        execFileSync("mkfifo", [join(workspace, "pipe")]);
      },
    };
    expect(await fileRead("pipe")).toEqual({ ok: false, error: 'file_read: "pipe" is not a file' });
  });
});

describe("file_write into a directory swapped after its check", () => {
  it("refuses to write when the directory became a symlink leading outside", async () => {
    fs.mkdirSync(join(workspace, "sub"));
    swaps.afterLstat = {
      path: "sub",
      swap: () => {
        fs.renameSync(join(workspace, "sub"), join(workspace, "sub-old"));
        fs.symlinkSync(outsideDir, join(workspace, "sub"));
      },
    };
    const outcome = await write.execute(
      { path: "sub/secret.txt", content: "overwritten" },
      toolContext({ workspace: async () => workspace }),
    );
    expect(fs.readFileSync(join(outsideDir, "secret.txt"), "utf8")).toBe("top secret");
    expect(fs.readdirSync(outsideDir)).toEqual(["secret.txt"]);
    expect(outcome).toEqual({
      ok: false,
      error:
        'file_write: "sub/secret.txt" changed while it was written (a directory of it is now a symlink) — refused',
    });
  });
});

describe("file_list of a directory swapped after its check", () => {
  it("refuses to list when the directory became a symlink leading outside", async () => {
    fs.mkdirSync(join(workspace, "sub"));
    swaps.after = {
      path: "sub",
      swap: () => {
        fs.renameSync(join(workspace, "sub"), join(workspace, "sub-old"));
        fs.symlinkSync(outsideDir, join(workspace, "sub"));
      },
    };
    const list = fileTools({ max_bytes: 100 }).find((tool) => tool.name === "file_list") as AgentTool;
    const outcome = await list.execute({ path: "sub" }, toolContext({ workspace: async () => workspace }));
    expect(JSON.stringify(outcome)).not.toContain("secret.txt");
    expect(outcome).toEqual({
      ok: false,
      error: 'file_list: "sub" changed while it was listed (a directory of it is now a symlink) — refused',
    });
  });
});
