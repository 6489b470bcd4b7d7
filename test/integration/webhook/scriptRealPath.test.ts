import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import type { Gateway } from "../../../src/gateway/index.js";
import {
  RECORDER_AGENT,
  readRun,
  recorderAgent,
  startGatewayInHome,
  webhookConfig,
} from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "../cli/svc.js";

const OPEN = "INSECURE_NO_AUTH";
const IGNORED = { status: 200, body: { status: "ignored", reason: "script" } };
const SCRIPT = 'cat >/dev/null\necho \'{"title": "ran"}\'\n';

let homes: TempHome[] = [];
let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  for (const home of homes) home.cleanup();
  homes = [];
});

function made(): TempHome {
  const home = tempHome();
  homes.push(home);
  return home;
}

/** `home`'s config.yaml: the recorder agent, and one open route per script, whose prompt is the script's title. */
function writeConfig(home: TempHome, scripts: Record<string, string>): void {
  home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
  const routes = Object.fromEntries(
    Object.entries(scripts).map(([name, script]) => [name, { secret: OPEN, script, prompt: "{title}" }]),
  );
  home.write(
    "config.yaml",
    stringify(webhookConfig(routes, { rate_limit: 1000 }, { agent: recorderAgent() })),
    0o600,
  );
}

/** Posts `{}` to `route` and, when accepted, waits for its run: its prompt is the title the script printed. */
async function ran(home: TempHome, port: number, route: string): Promise<unknown> {
  const answer = await postJson(`http://127.0.0.1:${port}/webhooks/${route}`, {});
  if (answer.status !== 202) return answer;
  const id = answer.body.delivery_id as string;
  return vi.waitFor(
    () => {
      const run = readRun(home, id);
      if (run === undefined) throw new Error(`run ${id} not recorded yet`);
      return run.prompt;
    },
    { timeout: 10_000, interval: 20 },
  );
}

/** The warnings of `svc config check` against the home at `dir` (a symlink, as SVC_HOME may be). */
async function checkWarnings(home: TempHome, dir: string): Promise<string[]> {
  const check = await svc(home, ["config", "check"], { env: { SVC_HOME: dir, HOME: dir } });
  expect(check.code, check.stderr).toBe(0);
  return check.stderr.split("\n").filter((line) => line.startsWith("Warning:"));
}

describe("a route's script named by its real path, where scripts/ or SVC_HOME is a symlink", () => {
  it("scripts/ linked elsewhere: the script by name, by its real path and by <home>/scripts/ all run; a link or a path out is still refused", async () => {
    const elsewhere = made();
    elsewhere.write("scripts/l.sh", SCRIPT);
    elsewhere.write("outside.sh", SCRIPT);
    symlinkSync(join(elsewhere.dir, "outside.sh"), join(elsewhere.dir, "scripts", "out.sh"));
    const home = made();
    symlinkSync(join(elsewhere.dir, "scripts"), join(home.dir, "scripts"));
    writeConfig(home, {
      l: "l.sh",
      // The same file by its real path: refused as leaving the scripts directory, every event ignored.
      l2: join(elsewhere.dir, "scripts", "l.sh"),
      l3: join(home.dir, "scripts", "l.sh"),
      // Still refused: a link in the directory that leads out of it, and a path out of it.
      out: join(elsewhere.dir, "scripts", "out.sh"),
      up: join(elsewhere.dir, "outside.sh"),
    });
    const until = `(scripts live in ${join(home.dir, "scripts")}); until script names a file in it every event on this route is ignored`;
    const file = join(home.dir, "config.yaml");
    expect(await checkWarnings(home, home.dir)).toEqual([
      `Warning: ${file}: platforms.webhook.routes.out.script: ${join(elsewhere.dir, "scripts", "out.sh")} — script resolves outside the scripts directory (symlink) ${until}`,
      `Warning: ${file}: platforms.webhook.routes.up.script: ${join(elsewhere.dir, "outside.sh")} — path leaves the scripts directory ${until}`,
    ]);

    gateway = await startGatewayInHome(home);
    for (const route of ["l", "l2", "l3"]) expect(await ran(home, gateway.port, route), route).toBe("ran");
    expect(await ran(home, gateway.port, "out")).toMatchObject(IGNORED);
    expect(await ran(home, gateway.port, "up")).toMatchObject(IGNORED);
  });

  it("scripts/ a symlink to a disk not mounted: the script by its path there and by its name are both not found, naming the link, and both run once the disk is back", async () => {
    const elsewhere = made();
    const disk = join(elsewhere.dir, "disk");
    mkdirSync(disk);
    const home = made();
    symlinkSync(join(disk, "scripts"), join(home.dir, "scripts"));
    const real = join(disk, "scripts", "x.sh");
    writeConfig(home, { r: real, r2: "x.sh" });
    const file = join(home.dir, "config.yaml");
    const missing = `script not found: the scripts directory (a symbolic link to ${join(disk, "scripts")}) is missing (scripts live in ${join(home.dir, "scripts")}); until it is there every event on this route is ignored`;
    // r was said to leave the scripts directory (scripts live in <home>/scripts), r2 not found.
    expect(await checkWarnings(home, home.dir)).toEqual([
      `Warning: ${file}: platforms.webhook.routes.r.script: ${real} — ${missing}`,
      `Warning: ${file}: platforms.webhook.routes.r2.script: x.sh — ${missing}`,
    ]);

    gateway = await startGatewayInHome(home);
    expect(await ran(home, gateway.port, "r")).toMatchObject(IGNORED);
    elsewhere.write("disk/scripts/x.sh", SCRIPT);
    for (const route of ["r", "r2"]) expect(await ran(home, gateway.port, route), route).toBe("ran");
  });

  it("SVC_HOME a symlink, its scripts/ a relative link to a disk not mounted: judged where the link really points, by name and by path, and both run once the disk is back", async () => {
    // `ln -s real/home h2; ln -s ../disk/scripts real/home/scripts`: h2/scripts points to real/disk/scripts.
    const base = made();
    mkdirSync(join(base.dir, "real", "disk"), { recursive: true });
    const real = tempHome(join(base.dir, "real"));
    homes.push(real);
    symlinkSync(join("..", "disk", "scripts"), join(real.dir, "scripts"));
    const h2 = join(base.dir, "h2");
    symlinkSync(real.dir, h2);
    const pointsTo = join(base.dir, "real", "disk", "scripts");
    writeConfig(real, { r1: "x.sh", r2: join(pointsTo, "x.sh") });
    const file = join(h2, "config.yaml");
    const missing = `script not found: the scripts directory (a symbolic link to ${pointsTo}) is missing (scripts live in ${join(h2, "scripts")}); until it is there every event on this route is ignored`;
    // It named <base>/disk/scripts (the link read beside h2), and r2 was said to leave the scripts directory.
    expect(await checkWarnings(real, h2)).toEqual([
      `Warning: ${file}: platforms.webhook.routes.r1.script: x.sh — ${missing}`,
      `Warning: ${file}: platforms.webhook.routes.r2.script: ${join(pointsTo, "x.sh")} — ${missing}`,
    ]);

    const linked = { ...real, dir: h2 };
    gateway = await startGatewayInHome(linked);
    expect(await ran(linked, gateway.port, "r2")).toMatchObject(IGNORED);
    base.write("real/disk/scripts/x.sh", SCRIPT);
    for (const route of ["r1", "r2"]) expect(await ran(linked, gateway.port, route), route).toBe("ran");
  });

  it("SVC_HOME a symlink (~/.svc on a data disk): the script by its path on that disk runs, with no warning", async () => {
    const real = made();
    real.write("scripts/x.sh", SCRIPT);
    writeConfig(real, { x: join(real.dir, "scripts", "x.sh") });
    const link = join(made().dir, "h24link");
    symlinkSync(real.dir, link);
    expect(await checkWarnings(real, link)).toEqual([]);

    const linked = { ...real, dir: link };
    gateway = await startGatewayInHome(linked);
    expect(await ran(linked, gateway.port, "x")).toBe("ran");
  });
});
