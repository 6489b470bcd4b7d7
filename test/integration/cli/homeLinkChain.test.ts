import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import {
  AS_ROOT,
  OTHER_USER,
  ownedTempDirs,
  svcAsUser,
  svcAsUserOneProcess,
} from "../../helpers/svcAsUser.js";
import { svc, svcOneProcess } from "./svc.js";

/** A `.env`, a `logs` directory or SVC_HOME itself that is a link to nothing: named where the system reads it. */

let home: TempHome;
// The test run as another user makes no TempHome (its directories are ownDir's).
afterEach(() => home?.cleanup());
const ownDir = ownedTempDirs();
svcAsUserOneProcess();
svcOneProcess();

const setup = ["gateway", "setup", "--enable", "--generate-secret", "--non-interactive"];
const withoutEnv =
  "restore its target or point the link at the file, or remove the link (svc then reads no .env)";

describe("a link to nothing in SVC_HOME is named where the system reads it", () => {
  it("a .env linked relatively under an SVC_HOME that is a link, by way of a `..` or another link, names its end", async () => {
    home = tempHome();
    // real/home, other/h -> ../real/home: .env -> ../dotfiles/env is real/dotfiles/env.
    const real = join(home.dir, "real", "home");
    mkdirSync(real, { recursive: true });
    mkdirSync(join(home.dir, "real", "dotfiles", "deep"), { recursive: true });
    mkdirSync(join(home.dir, "other"));
    symlinkSync("../real/home", join(home.dir, "other", "h"));
    const h = join(home.dir, "other", "h");
    const run = () => svc(home, setup, { env: { SVC_HOME: h } });
    const env = join(h, ".env");
    const dotEnv = join(home.dir, "real", "dotfiles", "env");
    symlinkSync("../dotfiles/env", join(real, ".env"));
    // Seen: "is a symbolic link to <home>/other/dotfiles/env", the link's text read beside the path as written.
    expect(await run()).toMatchObject({
      code: 1,
      stderr: `svc: ${env}: is a symbolic link to ${dotEnv}, which does not exist — ${withoutEnv}\n`,
    });
    // lnk -> ../dotfiles/deep, .env -> lnk/../env: real/dotfiles/env. Seen: "… to <home>/real/home/env".
    unlinkSync(join(real, ".env"));
    symlinkSync("../dotfiles/deep", join(real, "lnk"));
    symlinkSync("lnk/../env", join(real, ".env"));
    expect(await run()).toMatchObject({
      code: 1,
      stderr: `svc: ${env}: is a symbolic link to ${dotEnv}, which does not exist — ${withoutEnv}\n`,
    });
    // .env -> l1 -> <home>/unmounted/env. Seen: "a symbolic link to <home>/real/home/l1, which does not exist".
    unlinkSync(join(real, ".env"));
    const unmounted = join(home.dir, "unmounted", "env");
    symlinkSync(unmounted, join(real, "l1"));
    symlinkSync("l1", join(real, ".env"));
    expect(await run()).toMatchObject({
      code: 1,
      stderr: `svc: ${env}: is a symbolic link to ${unmounted} (by way of ${join(real, "l1")}), which does not exist — ${withoutEnv}\n`,
    });
    // A loop: no target of it is named as missing.
    unlinkSync(join(real, ".env"));
    symlinkSync(".env", join(real, ".env"));
    expect(await run()).toMatchObject({
      code: 1,
      stderr: `svc: ${env}: is a symbolic link into a loop of links, or a chain of more than 40 (no file at its end) — ${withoutEnv}\n`,
    });
  });

  it("a logs directory, or SVC_HOME, linked by way of another link to nothing names where it leads", async () => {
    home = tempHome();
    mkdirSync(join(home.dir, "sub"));
    symlinkSync("../l1", join(home.dir, "sub", "logs"));
    symlinkSync("nowhere", join(home.dir, "l1"));
    const h = join(home.dir, "sub");
    home.write("sub/config.yaml", "");
    const check = await svc(home, ["config", "check"], { env: { SVC_HOME: h } });
    expect(check.code).toBe(1);
    // Seen: "<h>/logs: a symbolic link to ../l1, which does not exist", the link's text as it stands.
    expect(check.stderr).toContain(
      `${join(h, "logs")}: a symbolic link to ${join(home.dir, "nowhere")} (by way of ${join(home.dir, "l1")}), which does not exist — the gateway keeps its log (gateway.log) there: create that directory, or remove the link (the gateway makes the directory)`,
    );

    // SVC_HOME -> l2 -> moved-away. Seen: "SVC_HOME is a symbolic link to l2, which does not exist".
    symlinkSync("l2", join(home.dir, "svc-home"));
    symlinkSync("moved-away", join(home.dir, "l2"));
    const linked = await svc(home, ["config", "check"], { env: { SVC_HOME: join(home.dir, "svc-home") } });
    expect(linked.code).toBe(1);
    expect(linked.stderr).toContain(
      `${join(home.dir, "svc-home")}: SVC_HOME is a symbolic link to ${join(home.dir, "moved-away")} (by way of ${join(home.dir, "l2")}), which does not exist — create that directory, or set SVC_HOME to another one`,
    );
  });

  // Seen: "SVC_HOME cannot be written (ELOOP …) — fix its owner or permissions", the loop taken for a refusal.
  it("an SVC_HOME, or a logs directory, in a loop of links is named as one", async () => {
    home = tempHome();
    const h = join(home.dir, "hl");
    symlinkSync("hl", h);
    const problem = `${h}: SVC_HOME is a symbolic link into a loop of links, or a chain of more than 40 — point the link at a directory, or set SVC_HOME to another one`;
    const check = await svc(home, ["config", "check"], { env: { SVC_HOME: h } });
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(problem);
    const run = await svc(home, ["gateway", "run", "--port", "0"], {
      env: { SVC_HOME: h },
      timeoutMs: 20_000,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`svc: ${problem}\n`);

    // logs -> loopdir/logs, loopdir -> loopdir.
    symlinkSync("loopdir", join(home.dir, "loopdir"));
    symlinkSync("loopdir/logs", join(home.dir, "logs"));
    const logs = `${join(home.dir, "logs")}: a symbolic link into a loop of links, or a chain of more than 40 — the gateway keeps its log (gateway.log) there: point the link at a directory, or remove the link (the gateway makes the directory)`;
    const logsCheck = await svc(home, ["config", "check"]);
    expect(logsCheck.code).toBe(1);
    expect(logsCheck.stderr).toContain(logs);
    const logsRun = await svc(home, ["gateway", "run", "--port", "0"], { timeoutMs: 20_000 });
    expect(logsRun.code).toBe(1);
    expect(logsRun.stderr).toBe(`svc: ${logs}\n`);
  });

  // Seen: a bare "svc: ELOOP: too many symbolic links encountered, stat '<home>/hl/cron'".
  it("a command that writes or lists a store in an SVC_HOME in a loop of links names the loop first", async () => {
    home = tempHome();
    const h = join(home.dir, "hl");
    symlinkSync("hl", h);
    const problem = `svc: ${h}: SVC_HOME is a symbolic link into a loop of links, or a chain of more than 40 — point the link at a directory, or set SVC_HOME to another one (`;
    const create = await svc(
      home,
      ["cron", "create", "--name", "digest", "--schedule", "1h", "--prompt", "p"],
      {
        env: { SVC_HOME: h },
      },
    );
    expect(create.code).toBe(1);
    expect(create.stderr.slice(0, problem.length + "ELOOP".length)).toBe(`${problem}ELOOP`);
    const list = await svc(home, ["webhook", "list"], { env: { SVC_HOME: h } });
    expect(list.code).toBe(1);
    expect(list.stderr).toContain(
      `${problem}${join(h, "webhook_subscriptions.json")}: cannot be read (ELOOP`,
    );
  });

  // Seen: "SVC_HOME cannot be written (ELOOP …) — … fix its owner or permissions (or free disk space)".
  it("an SVC_HOME below a loop of links is named as one, with the link that leads into it", async () => {
    home = tempHome();
    const hl = join(home.dir, "hl");
    symlinkSync("hl", hl);
    const h = join(hl, ".svc");
    const problem = `${h}: SVC_HOME is in a loop of links, or a chain of more than 40, on the way to it (${hl}) — point that link at a directory, or set SVC_HOME to another one`;
    const check = await svc(home, ["config", "check"], { env: { SVC_HOME: h } });
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(problem);
    expect(check.stderr).not.toContain("cannot be written");
    const run = await svc(home, ["gateway", "run", "--port", "0"], {
      env: { SVC_HOME: h },
      timeoutMs: 20_000,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`svc: ${problem}\n`);
  });

  // Seen: config check "ok" (exit 0), gateway run "SVC_HOME cannot be written (ENOENT … mkdir …) — … fix its owner
  // or permissions (or free disk space)", cron create a bare "svc: ENOENT: no such file or directory, mkdir '…/cron'";
  // below a file, "SVC_HOME cannot be written (ENOTDIR …) — … fix its owner or permissions".
  it("an SVC_HOME below a link to nothing, or below a file, names it: config check, gateway run and start, cron create", async () => {
    home = tempHome();
    const dang = join(home.dir, "dang");
    symlinkSync(join(home.dir, "nowhere", "x"), dang);
    const file = home.write("f1", "");
    const cases = [
      [
        join(dang, ".svc"),
        `${join(dang, ".svc")}: SVC_HOME cannot be made: ${dang}, on the way to it, is a symbolic link to ${join(home.dir, "nowhere", "x")}, which does not exist — create that directory, or set SVC_HOME to another one`,
      ],
      [
        join(file, ".svc"),
        `${join(file, ".svc")}: SVC_HOME cannot be made: ${file}, on the way to it, is a file, not a directory — set SVC_HOME to another one`,
      ],
    ] as const;
    for (const [h, problem] of cases) {
      const env = { SVC_HOME: h };
      const check = await svc(home, ["config", "check"], { env });
      expect(check.code).toBe(1);
      expect(check.stderr).toContain(problem);
      expect(check.stderr).not.toContain("cannot be written");
      for (const command of ["run", "start"]) {
        const started = await svc(home, ["gateway", command, "--port", "0"], { env, timeoutMs: 20_000 });
        expect(started.code).toBe(1);
        expect(started.stderr).toBe(`svc: ${problem}\n`);
      }
      const create = await svc(home, ["cron", "create", "--name", "a", "--schedule", "1h", "--prompt", "x"], {
        env,
      });
      expect(create.code).toBe(1);
      expect(create.stderr.startsWith(`svc: ${problem} (`)).toBe(true);
    }
  });

  // Seen: "SVC_HOME cannot be written (EACCES … stat …) — … fix its owner or permissions …", priv never named.
  it.runIf(AS_ROOT)(
    "an SVC_HOME below a directory this user may not look into, or below a link into one, names that directory",
    async () => {
      const base = ownDir();
      const priv = join(base, "priv");
      mkdirSync(priv);
      chmodSync(priv, 0o700);
      symlinkSync("priv/x", join(base, "l"));
      const closed = `${priv} (owned by uid 0) cannot be looked into by this user (nobody, uid ${OTHER_USER})`;
      for (const h of [join(base, "l", ".svc"), join(priv, ".svc")]) {
        const problem = `${h}: SVC_HOME cannot be reached: on the way to it, ${closed} — let this user look into it (chmod o+x ${priv}, as its owner or root), or set SVC_HOME to a directory this user can write`;
        const check = await svcAsUser(h, ["config", "check"]);
        expect(check.code).toBe(1);
        expect(check.stderr).toContain(problem);
        expect(check.stderr).not.toContain("cannot be written");
        const run = await svcAsUser(h, ["gateway", "run", "--port", "0"], 10_000);
        expect(run.code).toBe(1);
        expect(run.stderr).toBe(`svc: ${problem}\n`);
      }
      // With SVC_HOME unset, HOME is what leads there, and no chmod of another user's directory is advised.
      const user = join(priv, "home");
      const check = await svcAsUser(base, ["config", "check"], undefined, { HOME: user, SVC_HOME: "" });
      expect(check.code).toBe(1);
      expect(check.stderr).toContain(
        `HOME is ${user}, and on the way to it ${priv} (owned by uid 0), which this user (nobody, uid ${OTHER_USER}) may not look into, so svc has no home of its own: set SVC_HOME to a directory this user can write`,
      );
      expect(check.stderr).not.toContain("chmod");
    },
  );

  // Seen: "No MCP servers: there is no <h>/config.yaml, and <h>: SVC_HOME cannot be reached: …" (exit 0), and
  // "<h>/config.yaml: mcp_servers.x: no MCP server by that name (mcp_servers is empty)": the file was never seen.
  it.runIf(AS_ROOT)(
    "the mcp commands that read config.yaml in an SVC_HOME below a directory this user may not look into name that directory alone",
    async () => {
      const base = ownDir();
      const priv = join(base, "priv");
      mkdirSync(join(priv, "h"), { recursive: true });
      writeFileSync(join(priv, "h", "config.yaml"), "mcp_servers: {}\n");
      chmodSync(priv, 0o700);
      const h = join(priv, "h");
      const problem = `${h}: SVC_HOME cannot be reached: on the way to it, ${priv} (owned by uid 0) cannot be looked into by this user (nobody, uid ${OTHER_USER}) — let this user look into it (chmod o+x ${priv}, as its owner or root), or set SVC_HOME to a directory this user can write`;
      for (const args of [
        ["mcp", "list"],
        ["mcp", "list", "--no-check"],
        ["mcp", "test", "--all"],
        ["mcp", "tools", "x"],
        ["mcp", "call", "x", "y"],
        ["mcp", "login", "x"],
        ["mcp", "reauth", "--all"],
      ]) {
        const run = await svcAsUser(h, args, 20_000);
        expect(run, args.join(" ")).toEqual({ code: 1, stderr: `svc: ${problem}\n` });
      }
    },
  );

  // Seen as nobody: svc mcp logout x "x: not logged in — no saved login at …", svc mcp reload "no gateway is running
  // (no live pid in <h>/gateway.pid)", svc gateway status "Gateway: not running", svc gateway stop "The gateway is
  // not running" (even with root's gateway running there), svc webhook deliveries the history file's mode: none
  // of them could look.
  it.runIf(AS_ROOT)(
    "the commands that look for a login, the gateway or the history in an SVC_HOME this user may not look into name SVC_HOME's problem alone",
    async () => {
      const base = ownDir();
      const priv = join(base, "priv");
      mkdirSync(join(priv, "h"), { recursive: true });
      chmodSync(priv, 0o700);
      chownSync(priv, 0, 0);
      const below = join(priv, "h");
      const closed = join(base, "closed");
      mkdirSync(closed);
      chmodSync(closed, 0o700);
      chownSync(closed, 0, 0);
      for (const [h, problem] of [
        [
          below,
          `${below}: SVC_HOME cannot be reached: on the way to it, ${priv} (owned by uid 0) cannot be looked into by this user (nobody, uid ${OTHER_USER}) — let this user look into it (chmod o+x ${priv}, as its owner or root), or set SVC_HOME to a directory this user can write`,
        ],
        [
          closed,
          `${closed}: SVC_HOME cannot be written (EACCES: permission denied, access '${closed}') — the gateway keeps its pid file, logs, journal and stores there: fix its owner or permissions (or free disk space), or set SVC_HOME to a directory this user can write`,
        ],
      ] as const) {
        for (const args of [
          ["mcp", "logout", "x"],
          ["mcp", "reload"],
          ["gateway", "status"],
          ["gateway", "stop"],
          ["webhook", "deliveries"],
        ]) {
          const run = await svcAsUser(h, args, 20_000);
          expect(run, `${h}: ${args.join(" ")}`).toEqual({ code: 1, stderr: `svc: ${problem}\n` });
        }
      }
    },
  );

  // Seen as nobody, SVC_HOME root's with mode 0755 (mkdir, systemd's StateDirectory=) and deliveries/ 0700 as the
  // gateway makes it: svc webhook deliveries "<h>: SVC_HOME cannot be written (EACCES …)", not that the history is
  // the gateway user's; a command that only reads has no need to write SVC_HOME.
  it.runIf(AS_ROOT)(
    "an SVC_HOME this user may look into but not write leaves each command its own message",
    async () => {
      const h = join(ownDir(), "h");
      mkdirSync(join(h, "deliveries"), { recursive: true });
      chmodSync(h, 0o755);
      chmodSync(join(h, "deliveries"), 0o700);
      writeFileSync(join(h, "deliveries", "history.jsonl"), "", { mode: 0o600 });
      writeFileSync(join(h, "config.yaml"), "", { mode: 0o644 });
      // A pid no process has: as before, no gateway runs there.
      writeFileSync(join(h, "gateway.pid"), "2147483646\n", { mode: 0o644 });
      const deliveries = await svcAsUser(h, ["webhook", "deliveries"], 20_000);
      expect(deliveries.code).toBe(1);
      expect(deliveries.stderr).toContain(
        `svc: ${join(h, "deliveries")}: this user may not read the delivery history (permission denied) — `,
      );
      expect(deliveries.stderr).not.toContain("SVC_HOME");
      expect(await svcAsUser(h, ["gateway", "status"], 20_000)).toEqual({ code: 3, stderr: "" });
      for (const args of [
        ["gateway", "stop"],
        ["mcp", "reload"],
      ]) {
        const run = await svcAsUser(h, args, 20_000);
        expect(run.stderr, args.join(" ")).not.toContain("SVC_HOME cannot be");
      }
    },
  );

  // Seen as nobody, SVC_HOME nobody's and mcp-tokens/ root's with mode 0700 holding x.json: svc mcp logout x
  // "x: not logged in — no saved login at <h>/mcp-tokens/x.json", the file being there.
  it.runIf(AS_ROOT)("svc mcp logout names a directory in SVC_HOME this user may not look into", async () => {
    const h = ownDir();
    const tokens = join(h, "mcp-tokens");
    mkdirSync(tokens, { mode: 0o700 });
    writeFileSync(join(tokens, "x.json"), "{}", { mode: 0o600 });
    const run = await svcAsUser(h, ["mcp", "logout", "x"], 20_000);
    expect(run).toEqual({
      code: 1,
      stderr: `svc: ${join(tokens, "x.json")}: cannot be looked for: on the way to it, ${tokens} (owned by uid 0) cannot be looked into by this user (nobody, uid ${OTHER_USER}) — let this user look into it (chmod o+x ${tokens}, as its owner or root), or run the command as the user who owns it\n`,
    });
  });

  // Seen: "… a symbolic link to <home>/gone/../env, which does not exist", not what on the way is missing.
  it("a link whose `..` follows a name that is not there names that name", async () => {
    home = tempHome();
    symlinkSync("gone/../env", join(home.dir, ".env"));
    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(
      `${join(home.dir, ".env")}: is a symbolic link to ${join(home.dir, "gone")}/../env, which does not exist (${join(home.dir, "gone")}, on the way, is not there) — `,
    );
    unlinkSync(join(home.dir, ".env"));
    symlinkSync("gone/../logs", join(home.dir, "logs"));
    const logs = await svc(home, ["config", "check"]);
    expect(logs.code).toBe(1);
    expect(logs.stderr).toContain(
      `${join(home.dir, "logs")}: a symbolic link to ${join(home.dir, "gone")}/../logs, which does not exist (${join(home.dir, "gone")}, on the way, is not there) — the gateway keeps its log (gateway.log) there`,
    );
  });

  // Seen: "(<dir>/priv/x, on the way, is not there)", though priv/x is there: priv (root's, 0700) refused the look.
  it.runIf(AS_ROOT)(
    "a link whose `..` follows a name in a directory this user may not look into names that directory",
    async () => {
      const base = ownDir();
      const h = join(base, "home");
      mkdirSync(h);
      chownSync(h, OTHER_USER, OTHER_USER);
      const priv = join(base, "priv");
      mkdirSync(join(priv, "x"), { recursive: true });
      chmodSync(priv, 0o700);
      symlinkSync("../priv/x/../env", join(h, ".env"));
      const check = await svcAsUser(h, ["config", "check"]);
      expect(check.code).toBe(1);
      expect(check.stderr).toContain(
        `${join(h, ".env")}: is a symbolic link to ${join(priv, "x")}/../env, which does not exist (${priv}, on the way, cannot be looked into by this user) — `,
      );
      expect(check.stderr).not.toContain("is not there");
    },
  );
});

// Seen: "…/home/config.yaml: is a symbolic link to …/priv/cfg.yaml, which does not exist", though the file is
// there: priv (root's, 0700) keeps this user from getting to it.
it.runIf(AS_ROOT)(
  "a config.yaml or .env linked into a directory this user may not look into names that directory and its owner, not the file as missing",
  async () => {
    const base = ownDir();
    const priv = join(base, "priv");
    mkdirSync(priv);
    writeFileSync(join(priv, "cfg.yaml"), "platforms: {}\n");
    writeFileSync(join(priv, "env"), "A=1\n");
    chmodSync(priv, 0o700);
    const user = `this user (nobody, uid ${OTHER_USER})`;
    const closed = `${priv} (owned by uid 0) cannot be looked into by this user — let this user look into it (chmod o+x ${priv}, as its owner or root), or point the link at a file this user can read`;
    for (const [file, target] of [
      ["config.yaml", "cfg.yaml"],
      [".env", "env"],
    ] as const) {
      const h = join(base, file);
      mkdirSync(h);
      chownSync(h, OTHER_USER, OTHER_USER);
      symlinkSync(`../priv/${target}`, join(h, file));
      const check = await svcAsUser(h, ["config", "check"]);
      expect(check.code).toBe(1);
      expect(check.stderr).toContain(
        `${join(h, file)}: is a symbolic link to ${join(priv, target)}, which ${user} cannot get to: ${closed}\n`,
      );
      expect(check.stderr).not.toContain("does not exist");
    }
  },
);

/** An install link of a command server (`svc mcp install` writes config.yaml). */
const installLink = `svc://mcp/install?name=srv&config=${Buffer.from(JSON.stringify({ command: "node" })).toString("base64url")}`;

/** The commands that edit config.yaml without loading it first, each with what it is given on stdin. */
const editors: ReadonlyArray<readonly [readonly string[], string | undefined]> = [
  [["mcp", "rm", "x"], undefined],
  [["mcp", "install", installLink], "y\n"],
  [setup, undefined],
];

// Seen: svc mcp rm said 'no MCP server named "x": there is no <home>/config.yaml (svc mcp add x -- <command>
// creates it …)' (exit 2), svc mcp install replaced the link with a file of the embedded default, and svc gateway
// setup wrote .env before saying the gateway would not start.
it("a config.yaml link to nothing is refused by svc mcp remove, svc mcp install and svc gateway setup, as by every command, and kept", async () => {
  home = tempHome();
  const cfg = join(home.dir, "config.yaml");
  symlinkSync("gone/cfg.yaml", cfg);
  const refused = `svc: ${cfg}: is a symbolic link to ${join(home.dir, "gone", "cfg.yaml")}, which does not exist — restore its target or point the link at the file, or remove the link (svc then runs on its embedded default, with no routes)\n`;
  for (const [args, input] of editors) {
    const r = await svc(home, args, input === undefined ? {} : { input });
    expect(r.code, args.join(" ")).toBe(1);
    expect(r.stderr, args.join(" ")).toBe(refused);
  }
  expect(lstatSync(cfg).isSymbolicLink()).toBe(true);
  expect(existsSync(join(home.dir, ".env"))).toBe(false);
});

// Seen as nobody: svc mcp rm said 'no MCP server named "x": there is no <home>/config.yaml …' (exit 2), svc gateway
// setup (and svc mcp install, answered yes) "cannot write <dir>/priv/cfg.yaml: this user may not create files in
// <dir>/priv" — setup after writing .env.
it.runIf(AS_ROOT)(
  "svc mcp remove, svc mcp install and svc gateway setup name a config.yaml linked into a directory this user may not look into, as every command does",
  async () => {
    const base = ownDir();
    const priv = join(base, "priv");
    mkdirSync(priv);
    writeFileSync(join(priv, "cfg.yaml"), "mcp_servers:\n  x: {command: node}\n");
    chmodSync(priv, 0o700);
    const h = join(base, "home");
    mkdirSync(h);
    chownSync(h, OTHER_USER, OTHER_USER);
    symlinkSync("../priv/cfg.yaml", join(h, "config.yaml"));
    const closed = `svc: ${join(h, "config.yaml")}: is a symbolic link to ${join(priv, "cfg.yaml")}, which this user (nobody, uid ${OTHER_USER}) cannot get to: ${priv} (owned by uid 0) cannot be looked into by this user — let this user look into it (chmod o+x ${priv}, as its owner or root), or point the link at a file this user can read\n`;
    for (const [args] of editors) {
      const r = await svcAsUser(h, args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toBe(closed);
    }
    expect(existsSync(join(h, ".env"))).toBe(false);
    expect(lstatSync(join(h, "config.yaml")).isSymbolicLink()).toBe(true);
  },
);
