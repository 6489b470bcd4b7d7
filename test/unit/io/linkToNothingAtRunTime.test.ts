import { openSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { logFileProblem } from "../../../src/io/logFileProblem.js";
import { makeDirs } from "../../../src/io/makeDirs.js";
import { writeStatusFile } from "../../../src/io/mcp/statusFile.js";
import { historyWarnings } from "../../helpers/historyWarnings.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { sessionWarnings } from "../../helpers/sessionWarnings.js";
import { thrown } from "../../helpers/thrown.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

const LOOP = "a symbolic link into a loop of links, or a chain of more than 40";

/**
 * `name` in `dir` made a link to nothing (`gone`, which is not there) or into a loop of links (`name -> other ->
 * name`), as while the gateway runs; what the writers say of it (`said`), and what to do (`fix`).
 */
const WAYS = [
  {
    kind: "a link to nothing",
    make(dir: string, name: string) {
      symlinkSync(join(dir, "gone"), join(dir, name));
      return {
        said: `${join(dir, name)} is a symbolic link to ${join(dir, "gone")}, which does not exist`,
        fix: "create that directory, or remove the link",
      };
    },
  },
  {
    kind: "a loop of links",
    make(dir: string, name: string) {
      symlinkSync(join(dir, `${name}-other`), join(dir, name));
      symlinkSync(join(dir, name), join(dir, `${name}-other`));
      return {
        said: `${join(dir, name)} is ${LOOP}`,
        fix: "point the link at a directory, or remove the link",
      };
    },
  },
] as const;

// Seen: "ENOENT: no such file or directory, mkdir '…/logs'" and "ELOOP: too many symbolic links encountered, mkdir
// '…/logs'" while the start names the same links.
describe.each(WAYS)("$kind in a data directory's place while the gateway runs", ({ make }) => {
  it("the gateway log's writer names the link and what to do, not the bare errno", () => {
    home = tempHome();
    const logs = join(home.dir, "logs");
    const { said, fix } = make(home.dir, "logs");
    const file = join(logs, "gateway.log");
    for (const err of [thrown(() => makeDirs(logs)), thrown(() => openSync(file, "a"))])
      expect(logFileProblem(file, err)).toBe(
        `${said} — ${fix} (the gateway makes the directory again within a second)`,
      );
  });

  it("the MCP status file's writer names it", () => {
    home = tempHome();
    const cache = join(home.dir, "mcp-cache");
    const { said, fix } = make(home.dir, "mcp-cache");
    expect(() => writeStatusFile(cache, { pid: 1, updatedAt: "", servers: [] })).toThrow(
      `cannot write ${join(cache, "status.json")}: ${said} — the file is unchanged; ${fix} (svc makes the directory)`,
    );
  });

  it("the delivery history's writer names it, once", () => {
    home = tempHome();
    const at = home.dir;
    const {
      warnings,
      changed: { said, fix },
    } = historyWarnings(at, (dir) => {
      rmSync(dir, { recursive: true });
      return make(at, "deliveries");
    });
    expect(warnings).toEqual([
      [
        `[webhook] delivery history not written: ${said} — ${fix} (the gateway makes the directory); said once until a write succeeds again`,
      ],
    ]);
  });

  it("the run sessions' writer names it", async () => {
    home = tempHome();
    const sessions = join(home.dir, "sessions");
    const { said, fix } = make(home.dir, "sessions");
    const warnings = await sessionWarnings(home.dir);
    expect(warnings).toEqual([
      [
        `[webhook] run session not recorded in ${sessions}: ${said} — ${fix} (the gateway makes the directory); said once until a run is recorded again`,
      ],
    ]);
  });
});
