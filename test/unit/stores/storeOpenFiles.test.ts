import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const module = (path: string) => JSON.stringify(pathToFileURL(svcModule(path)).href);
const FIX =
  "the gateway has as many files open as its limit allows, not a problem of this file: raise its open-file limit (ulimit -n; LimitNOFILE= in a systemd unit, docker run --ulimit nofile=...)";

let home: TempHome;
afterEach(() => home?.cleanup());

/**
 * Stores read by a gateway at its limit on open files (many connections, many MCP servers): seen as
 * `[cron] …/cron/jobs.json: cannot be read (EMFILE: too many open files, open '…/cron/jobs.json')` and
 * `[cron] cannot list the profiles (EMFILE: too many open files, scandir '…/profiles')`, which read as if
 * that file or directory were at fault, and said nothing of the limit or how to raise it.
 */
describe("a store read at the limit on open files", () => {
  it("names the limit and how to raise it (a versioned store, a store's text, the profiles' list)", async () => {
    home = tempHome();
    home.write("cron/jobs.json", '{"jobs": {}}');
    home.write("profiles/work/config.yaml", "");
    const script = `
      import { openSync, closeSync } from "node:fs";
      import { join } from "node:path";
      import { cronStore } from ${module("io/stores/cronStore.js")};
      import { readStoreText } from ${module("io/stores/storeText.js")};
      import { existingProfiles, profilesNotListed } from ${module("io/profiles.js")};
      const home = ${JSON.stringify(home.dir)};
      const jobs = join(home, "cron", "jobs.json");
      const store = cronStore(jobs);
      const said = (fn) => { try { fn(); return "read"; } catch (err) { return err.message; } };
      const held = [];
      try { for (;;) held.push(openSync("/dev/null", "r")); } catch {}
      const out = {
        versioned: said(() => store.read()),
        text: said(() => readStoreText(jobs)),
        profiles: (() => { try { existingProfiles(home); return "listed"; } catch (err) { return profilesNotListed(err); } })(),
      };
      for (const fd of held) closeSync(fd);
      console.log(JSON.stringify(out));`;
    const node = [process.execPath, ...CLI_NODE_ARGS, "--input-type=module", "-e", script];
    const { stdout } = await execa("bash", ["-c", 'ulimit -n 64 && exec "$@"', "bash", ...node], {
      cwd: resolve(import.meta.dirname, "../../.."),
    });
    const jobs = `${home.dir}/cron/jobs.json`;
    expect(JSON.parse(stdout)).toEqual({
      versioned: `${jobs}: cannot be read (EMFILE: too many open files, open '${jobs}') — ${FIX}`,
      text: `${jobs}: cannot be read (EMFILE: too many open files, open '${jobs}') — ${FIX}`,
      profiles: `cannot list the profiles (EMFILE: too many open files, scandir '${home.dir}/profiles'); running the default profile's jobs only — ${FIX}`,
    });
  }, 30_000);
});
