import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { referenceWarnings } from "../../../src/actors/routeReferences.js";
import { cronStore } from "../../../src/io/stores/cronStore.js";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

/** The reference warnings of one route firing `cron_job` in a home whose store holds `j1` in `state`. */
function warningsFor(state: string, profile = "default", cronJob = "nightly"): Promise<string[]> {
  home = tempHome();
  const store = JSON.parse(
    oneJobStore({ name: "nightly", prompt: "p", next_run: "2099-01-01T00:00:00.000Z" }),
  );
  store.jobs.j1.state = state;
  const path = join(home.dir, "cron", "jobs.json");
  home.write("cron/jobs.json", JSON.stringify(store));
  return referenceWarnings(
    [{ at: "config.yaml: platforms.webhook.routes.fire", route: { cron_job: cronJob }, profile }],
    {
      scriptsDir: () => join(home.dir, "scripts"),
      profileRoot: () => home.dir,
      cronStore: () => ({ store: cronStore(path), path }),
      unusableCronStore: () => undefined,
    },
  );
}

describe("a cron_job route's job, checked at startup, reload and by svc config check", () => {
  it("an enabled job is not named", async () => {
    expect(await warningsFor("enabled")).toEqual([]);
  });

  it("a paused or disabled job is named with the command that resumes it: every event is dropped until then", async () => {
    expect(await warningsFor("paused")).toEqual([
      "config.yaml: platforms.webhook.routes.fire.cron_job: nightly — the job is paused; until it is resumed (svc cron resume nightly) every event on this route is dropped",
    ]);
    home.cleanup();
    expect(await warningsFor("disabled", "work")).toEqual([
      "config.yaml: platforms.webhook.routes.fire.cron_job: nightly — the job is disabled in profile work; until it is resumed (svc cron resume nightly --profile work) every event on this route is dropped",
    ]);
  });
});

describe("a cron_job route naming a job by a name two jobs have (the store edited by hand)", () => {
  it("is named with the jobs and which one each event fires (the first in the file); a reference by id is not", async () => {
    home = tempHome();
    const store = JSON.parse(
      oneJobStore({ name: "nightly", prompt: "p", next_run: "2099-01-01T00:00:00.000Z" }),
    );
    store.jobs.j2 = { ...store.jobs.j1, id: "j2", prompt: "a copy" };
    const path = join(home.dir, "cron", "jobs.json");
    home.write("cron/jobs.json", JSON.stringify(store));
    const check = (cronJob: string) =>
      referenceWarnings(
        [
          {
            at: "config.yaml: platforms.webhook.routes.fire",
            route: { cron_job: cronJob },
            profile: "default",
          },
        ],
        {
          scriptsDir: () => join(home.dir, "scripts"),
          profileRoot: () => home.dir,
          cronStore: () => ({ store: cronStore(path), path }),
          unusableCronStore: () => undefined,
        },
      );
    expect(await check("nightly")).toEqual([
      `config.yaml: platforms.webhook.routes.fire.cron_job: nightly — 2 jobs in ${path} have this name (j1, j2); each event fires the first, j1 — job names are unique: rename the others in the file, or name the job by its id (cron_job: j1)`,
    ]);
    expect(await check("j2")).toEqual([]);
  });
});

describe("a cron_job route naming no job", () => {
  it("a job's name in other letters or misspelt is named (did you mean), as svc webhook subscribe --cron-job names it", async () => {
    for (const ref of ["Nightly", "nightyl", "  nightly "]) {
      home?.cleanup();
      const [warning] = await warningsFor("enabled", "default", ref);
      expect(warning).toBe(
        `config.yaml: platforms.webhook.routes.fire.cron_job: ${ref} — no such job in ${join(home.dir, "cron", "jobs.json")} — did you mean nightly? (\`svc cron list\` shows the jobs); until it exists every event on this route is dropped`,
      );
    }
  });

  it("a name far from every job's is named without a guess", async () => {
    expect(await warningsFor("enabled", "default", "weekly-report")).toEqual([
      expect.stringMatching(
        /cron_job: weekly-report — no such job in .*jobs\.json \(`svc cron list`\); until it exists/,
      ),
    ]);
  });
});

describe("a route's script, checked at startup, reload and by svc config check", () => {
  const scriptWarnings = (script: string) => {
    home?.cleanup();
    home = tempHome();
    home.write("scripts/sub/x.py", "print(1)\n");
    const scripts = join(home.dir, "scripts");
    return referenceWarnings(
      [{ at: "config.yaml: platforms.webhook.routes.r", route: { script }, profile: "default" }],
      {
        scriptsDir: () => scripts,
        profileRoot: () => home.dir,
        cronStore: () => ({
          store: cronStore(join(home.dir, "cron", "jobs.json")),
          path: join(home.dir, "cron", "jobs.json"),
        }),
        unusableCronStore: () => undefined,
      },
    );
  };

  it("one not found is ignored until it is there; one out of the directory or a directory, until script names a file", async () => {
    const missing = await scriptWarnings("gone.py");
    expect(missing).toEqual([
      expect.stringMatching(
        /r\.script: gone\.py — script not found \(scripts live in .*\); until it is there every event/,
      ),
    ]);
    const escapes = await scriptWarnings("../config.yaml");
    expect(escapes).toEqual([
      expect.stringMatching(
        /— path leaves the scripts directory \(scripts live in .*\); until script names a file in it every event on this route is ignored$/,
      ),
    ]);
    const directory = await scriptWarnings("sub");
    expect(directory[0]).toContain("not a file");
    expect(directory[0]).toContain("until script names a file in it every event");
  });
});
