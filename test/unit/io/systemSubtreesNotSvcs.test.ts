import { mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { homeCause } from "../../../src/cli/homeCause.js";
import { closedDirectory } from "../../../src/io/closedDir.js";
import { linkTargetToGive, systemOrHome } from "../../../src/io/dataDirsWritable.js";
import { homeNotWritable, homeProblem } from "../../../src/io/homeWritable.js";
import { permissionFix } from "../../../src/io/permissionFix.js";
import { thisUser } from "../../../src/io/userName.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { refusing } from "../../helpers/refusing.js";

let dir: TempHome;
afterEach(() => {
  vi.unstubAllEnvs();
  dir.cleanup();
});

const EACCES = Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
const SET = "set SVC_HOME to a directory this user can write";

/** A temp directory with alice's home in it, as the passwd file returned names it (uid 4242: another user). */
function aliceHome(): { alice: string; passwd: string } {
  dir = tempHome();
  const alice = join(dir.dir, "home", "alice");
  mkdirSync(join(alice, ".ssh"), { recursive: true });
  const passwd = dir.write("passwd", `alice:x:4242:4242::${alice}:/bin/sh\n`);
  return { alice, passwd };
}

/**
 * Seen (as nobody, and as root): a path below another user's home or below a system directory was offered a chown,
 * chmod or re-pointing of what is not svc's: alice/.ssh closed → "chmod o+x …/alice/.ssh", `sessions -> alice/appdata`
 * → "chown -R nobody …/alice/appdata", `state -> /etc/ssl/private/x` → "chmod o+x /etc/ssl/private".
 */
describe("what is below a system directory or another user's home", () => {
  it("is the system's or that user's, as the system's own directories and the homes themselves are", () => {
    const { alice, passwd } = aliceHome();
    expect(systemOrHome(join(alice, ".ssh"), passwd)).toBe(`is in ${alice}, the home directory of alice`);
    expect(systemOrHome("/etc/ssl/private", passwd)).toBe("is in /etc, one of the system's own directories");
    for (const dir of ["/var/lib", "/var/lib/private", "/var/log", "/var/cache", "/run"])
      expect(systemOrHome(dir, passwd)).toBe("is one of the system's own directories");
    expect(systemOrHome("/root/svc", passwd)).toBe("is in /root, one of the system's own directories");
    // Every user's own places, and svc's directories elsewhere, are none of those.
    // A service's own directory below /var/lib, /var/log, /var/cache or /run (systemd's StateDirectory=svc gives
    // the unit's user /var/lib/svc, whose passwd home is elsewhere) is svc's to fix like any other.
    const services = [
      "/var/lib/svc",
      "/var/lib/svc-data/state",
      "/var/log/svc",
      "/var/cache/svc",
      "/run/svc",
    ];
    for (const free of [
      "/tmp/svc",
      "/dev/shm/svc",
      "/srv/svc",
      "/opt/svc/data",
      join(dir.dir, "svc"),
      ...services,
    ])
      expect(systemOrHome(free, passwd)).toBeUndefined();
  });

  it("a closed one is not offered to be opened, nor a link's target there to be given away", () => {
    const { alice, passwd } = aliceHome();
    const ssh = join(alice, ".ssh");
    const closed = closedDirectory(join(ssh, "f"), passwd, refusing(ssh));
    expect(closed).toMatchObject({ dir: ssh, notToOpen: `is in ${alice}, the home directory of alice` });
    expect(closed?.fix).toBeUndefined();
    const appdata = join(alice, "appdata");
    mkdirSync(appdata);
    const list = (at: string) => readdirSync(at);
    expect(linkTargetToGive(appdata, "sessions", dir.dir, dir.dir, list, passwd)).toEqual({
      why: `is in ${alice}, the home directory of alice`,
    });
  });
});

/**
 * Seen (as nobody, SVC_HOME=/root, /etc/ssl/private, /var/lib/private): "… fix its owner or permissions …, or set
 * SVC_HOME … (… on the way to it, /root … cannot be looked into …: give it to this user: chown -R nobody /root (as
 * root))"; `svc config check` with SVC_HOME=/, /etc, /usr said "fix its owner or permissions". SVC_HOME is svc's, but
 * the directory it names there is not.
 */
describe("an SVC_HOME that is a system directory or another user's home, or in one", () => {
  it("is never offered a chown, a chmod or its owner fixed: SVC_HOME is what to set", () => {
    const { alice, passwd } = aliceHome();
    for (const home of ["/", "/etc", "/usr", "/root", "/etc/ssl/private", "/var/lib/private", alice]) {
      const said = homeNotWritable(home, EACCES, passwd).message;
      expect(said).not.toMatch(/owner or permissions|chown|chmod/);
      expect(said).toContain(`not svc's to change: ${SET}`);
    }
    // svc's own elsewhere keeps its fix, a service's own /var/lib/svc too (made by root, given to no one yet).
    for (const own of [join(dir.dir, "svc"), "/var/lib/svc"])
      expect(homeNotWritable(own, EACCES, passwd).message).toContain(
        `fix its owner or permissions (or free disk space), or ${SET}`,
      );
    for (const home of ["/root", "/etc/ssl/private/svc"]) {
      vi.stubEnv("SVC_HOME", home);
      const closedAt = home === "/root" ? "/root" : "/etc/ssl/private";
      const fix = permissionFix(join(home, "webhook_subscriptions.json"), EACCES, (file) =>
        closedDirectory(file, passwd, refusing(closedAt)),
      );
      expect(fix).not.toMatch(/chown|chmod|point the link/);
      expect(fix).toMatch(new RegExp(`not to be opened to this user: ${SET}$`));
    }
  });

  it("the link into one is named as the way there, with SVC_HOME or the link to change", () => {
    const { passwd } = aliceHome();
    const linked = join(dir.dir, "svc");
    symlinkSync("/root/svc", linked);
    vi.stubEnv("SVC_HOME", linked);
    const fix = permissionFix(join(linked, "webhook_subscriptions.json"), EACCES, (file) =>
      closedDirectory(file, passwd, refusing("/root")),
    );
    expect(fix).toMatch(
      new RegExp(`not to be opened to this user: ${SET}, or point the link into it elsewhere$`),
    );
  });
});

/**
 * Seen: `SVC_HOME=/etc/localtime/x svc webhook list` → "/etc/localtime, on the way to it, is a symbolic link to
 * /usr/share/zoneinfo/Etc/UTC, which is a file, not a directory — point the link at a directory, or set SVC_HOME to
 * another one"; `HOME=/etc/localtime svc cron list` alike; a system link to nothing → "create that directory". A link
 * in another user's home stands for any link that is not this user's to change.
 */
describe("a link on the way to SVC_HOME, or SVC_HOME itself, that is not this user's", () => {
  it("is not offered to be pointed elsewhere, nor its target made: SVC_HOME is what to set", () => {
    const { alice, passwd } = aliceHome();
    const file = dir.write("home/alice/zone", "UTC");
    const toFile = join(alice, "localtime");
    symlinkSync(file, toFile);
    const nowhere = join(alice, "modules.conf");
    symlinkSync(join(alice, "modules"), nowhere);
    const loop = join(alice, "loop");
    symlinkSync(loop, loop);
    const said = [
      homeProblem(join(toFile, "x"), {}, passwd),
      homeProblem(join(nowhere, "x"), {}, passwd),
      homeProblem(join(loop, "x"), {}, passwd),
      homeProblem(nowhere, {}, passwd),
      homeProblem(join(toFile, ".svc"), { HOME: toFile }, passwd),
    ];
    expect(said).toHaveLength(5);
    for (const problem of said) {
      expect(problem).toMatch(/set SVC_HOME to (?:another one|a directory this user can write)$/);
      expect(problem).not.toMatch(/point (?:the|that) link|create that directory/);
    }
    // This user's own link elsewhere keeps its fix.
    const own = join(dir.dir, "localtime");
    symlinkSync(file, own);
    expect(homeProblem(join(own, "x"), {}, passwd)).toMatch(
      /point the link at a directory, or set SVC_HOME to another one$/,
    );
  });
});

/**
 * Seen (as nobody, SVC_HOME=/root/svc): the store's error in brackets said again what SVC_HOME's problem said
 * ("… not to be opened to this user: set SVC_HOME to a directory this user can write"), and "or point the link into
 * it elsewhere" though no link led there.
 */
describe("a store's failure after SVC_HOME's problem", () => {
  it("drops a fix SVC_HOME's problem says already, and keeps one it does not", () => {
    dir = tempHome();
    const home = join(dir.write("file", "x"), "sub");
    const problem = homeProblem(home) as string;
    const fix = problem.slice(problem.indexOf(" — ") + 3);
    const bare = `${home}/webhook_subscriptions.json: cannot be read (EACCES: permission denied)`;
    const repeated = `${bare} — on the way to it, ${dir.dir} cannot be looked into by ${thisUser()}: ${fix}`;
    expect(homeCause(new Error(repeated), () => home)).toBe(`${problem} (${bare})`);
    const other = `${bare} — make it readable by the user svc runs as`;
    expect(homeCause(new Error(other), () => home)).toBe(`${problem} (${other})`);
  });
});
