import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createActor } from "xstate";
import { runToolsets } from "../../../src/actors/agent/index.js";
import { DEFAULT_WEBHOOK_TOOLSETS } from "../../../src/actors/agent/runner.js";
import { findFirstSkill, loadFirstSkill } from "../../../src/actors/agent/skills.js";
import { createRouteRegistry, routeTable } from "../../../src/actors/routes.js";
import { drainRuns, enqueueRun, runsMachine, unfinishedRuns } from "../../../src/actors/runs.js";
import { configSchema } from "../../../src/config/schema.js";
import { skillNameWarnings } from "../../../src/gateway/routeWarnings.js";
import { endpointOf, headAnswer } from "../../../src/io/http/core.js";
import { linkChainSyncCalls } from "../../../src/io/linkChain.js";
import { silentLogger } from "../../../src/io/log.js";
import { interpreterFor, interpretScriptOutput, resolveScript, runScript } from "../../../src/io/scripts.js";
import type { AcceptedEvent } from "../../../src/streams/context.js";
import { MAX_JSON_DEPTH } from "../../../src/streams/jsonNumbers/index.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

describe("endpointOf (spec 4.1 paths)", () => {
  it("maps health, plain and profile-prefixed webhook paths", () => {
    expect(endpointOf("/health", false)).toEqual({ kind: "health" });
    expect(endpointOf("/webhooks/gh", false)).toEqual({
      kind: "webhook",
      routeName: "gh",
      profile: undefined,
    });
    expect(endpointOf("/p/work/webhooks/gh", true)).toEqual({
      kind: "webhook",
      routeName: "gh",
      profile: "work",
    });
    for (const path of ["/p/work/webhooks/gh", "/webhooks", "/p/work/hooks/gh", "/"]) {
      expect(endpointOf(path, false), path).toEqual({ kind: "none" });
    }
    for (const path of ["/webhooks/", "/webhooks/a/b", "/webhooks/gh/", "/webhooks/a%2Fb", "/webhooks/%zz"]) {
      expect(endpointOf(path, false), path).toEqual({ kind: "unknown_route" });
    }
    expect(endpointOf("/webhooks/g%68", false)).toEqual({
      kind: "webhook",
      routeName: "gh",
      profile: undefined,
    });
    expect(endpointOf("/p//webhooks/gh", true)).toEqual({ kind: "unknown_route" });
    expect(endpointOf("/p/work/webhooks/gh/", true)).toEqual({ kind: "unknown_route" });
  });

  it("each path and Host is judged as itself, whatever the request before it had (the last good one is remembered)", () => {
    const head = (path: string, host: string) => ({
      method: "POST",
      path,
      query: undefined,
      headers: { host, "content-length": "2" },
    });
    const good = head("/webhooks/gh", "svc.example:8644");
    for (let round = 0; round < 3; round++) {
      expect(headAnswer(good, false)).toEqual({ kind: "webhook", routeName: "gh", profile: undefined });
      // The same path read with multiplexing on, then another path, then a bad path and a bad Host.
      expect(endpointOf("/p/work/webhooks/gh", true)).toEqual({
        kind: "webhook",
        routeName: "gh",
        profile: "work",
      });
      expect(endpointOf("/p/work/webhooks/gh", false)).toEqual({ kind: "none" });
      expect(headAnswer(head("/webhooks/other", "svc.example:8644"), false)).toMatchObject({
        routeName: "other",
      });
      expect(headAnswer(head("/webhooks/caf\u00e9", "svc.example:8644"), false)).toMatchObject({
        outcome: { status: 400 },
      });
      expect(headAnswer(head("/webhooks/gh", "a.example, b.example"), false)).toMatchObject({
        outcome: { status: 400 },
      });
      expect(headAnswer(head("/webhooks/gh", "bad host"), false)).toMatchObject({ outcome: { status: 400 } });
    }
  });
});

describe("script output (spec 2.4)", () => {
  const payload = { a: 1 };
  it("JSON object replaces, other text becomes script_output, the ignore cases ignore", () => {
    expect(interpretScriptOutput('{"b":2}\n', payload)).toEqual({ kind: "payload", payload: { b: 2 } });
    expect(interpretScriptOutput("hello\n", payload)).toEqual({
      kind: "payload",
      payload: { a: 1, script_output: "hello" },
    });
    expect(interpretScriptOutput("[1,2]", payload)).toEqual({
      kind: "payload",
      payload: { a: 1, script_output: "[1,2]" },
    });
    for (const out of ["", "  \n", "[SILENT]", "[SILENT]\n", '{"__svc_ignore__": true}']) {
      expect(interpretScriptOutput(out, payload).kind, JSON.stringify(out)).toBe("ignore");
    }
    // Why, for the delivery history: what the script did, in svc's words.
    const reasons = ["", "[SILENT]", '{"__svc_ignore__": true, "note": "anything"}'].map(
      (out) => (interpretScriptOutput(out, payload) as { reason?: string }).reason,
    );
    expect(reasons).toEqual([
      "script printed nothing",
      "script printed [SILENT]",
      "script printed __svc_ignore__: true",
    ]);
    expect(interpretScriptOutput('{"__svc_ignore__": false, "c": 1}', payload)).toEqual({
      kind: "payload",
      payload: { __svc_ignore__: false, c: 1 },
    });
  });
  it("Python's NaN / Infinity / -Infinity (json.dumps' default) are null in the object; elsewhere the text is text", () => {
    expect(interpretScriptOutput('{"r": NaN, "s": [Infinity, -Infinity], "t": "NaN"}', payload)).toEqual({
      kind: "payload",
      payload: { r: null, s: [null, null], t: "NaN" },
    });
    // Inside strings (an escaped quote included) nothing is rewritten; __svc_ignore__ still ignores.
    expect(interpretScriptOutput('{"q": "a\\"NaN", "n": NaN}', payload)).toEqual({
      kind: "payload",
      payload: { q: 'a"NaN', n: null },
    });
    expect(interpretScriptOutput('{"__svc_ignore__": true, "r": NaN}', payload).kind).toBe("ignore");
    // No JSON object even then (a bare constant, an array, a word that only starts like one): text.
    for (const out of ["NaN", "[NaN]", '{"v": NaNa}', '{"v": xInfinity}', "{NaN: 1}"])
      expect(interpretScriptOutput(out, payload), out).toEqual({
        kind: "payload",
        payload: { a: 1, script_output: out },
      });
  });
  it("a JSON object nested past the payload's depth limit is ignored, not taken as script_output text", () => {
    const deep = (n: number) => `{"a": ${"[".repeat(n)}${"]".repeat(n)}}`;
    expect(interpretScriptOutput(deep(MAX_JSON_DEPTH - 1), payload).kind).toBe("payload");
    expect(interpretScriptOutput(deep(MAX_JSON_DEPTH), payload)).toEqual({
      kind: "ignore",
      why: "standard output is a JSON object nested deeper than 512 levels (the most a payload may nest)",
      reason: "script printed a JSON object nested deeper than 512 levels",
    });
    // Text that is too deep but no JSON object (an array, broken JSON) stays other text output.
    const array = `${"[".repeat(MAX_JSON_DEPTH + 1)}${"]".repeat(MAX_JSON_DEPTH + 1)}`;
    expect(interpretScriptOutput(array, payload)).toEqual({
      kind: "payload",
      payload: { a: 1, script_output: array },
    });
    const broken = `{"a": ${"[".repeat(MAX_JSON_DEPTH + 1)}`;
    expect(interpretScriptOutput(broken, payload)).toEqual({
      kind: "payload",
      payload: { a: 1, script_output: broken },
    });
  });
  it("interpreter by extension", () => {
    expect(interpreterFor("a.sh")).toBe("bash");
    expect(interpreterFor("a.BASH")).toBe("bash");
    expect(interpreterFor("a.py")).toBe("python3");
    expect(interpreterFor("a")).toBe("python3");
  });
});

describe("resolveScript", () => {
  let home: TempHome;
  afterEach(() => home.cleanup());
  it("stays inside the scripts directory, through symlinks too", async () => {
    home = tempHome();
    home.write("scripts/ok.sh", "");
    home.write("scripts/sub/inner.py", "");
    home.write("outside.sh", "");
    symlinkSync(join(home.dir, "outside.sh"), join(home.dir, "scripts", "escape.sh"));
    symlinkSync(join(home.dir, "scripts", "ok.sh"), join(home.dir, "scripts", "alias.sh"));
    const dir = join(home.dir, "scripts");
    expect(await resolveScript(dir, "ok.sh")).toEqual({ path: join(dir, "ok.sh") });
    expect(await resolveScript(dir, "sub/inner.py")).toEqual({ path: join(dir, "sub", "inner.py") });
    expect(await resolveScript(dir, "alias.sh")).toEqual({ path: join(dir, "ok.sh") });
    expect(await resolveScript(dir, "../outside.sh")).toEqual({ why: "path leaves the scripts directory" });
    expect(await resolveScript(dir, join(home.dir, "outside.sh"))).toEqual({
      why: "path leaves the scripts directory",
    });
    expect(await resolveScript(dir, "escape.sh")).toEqual({
      why: "script resolves outside the scripts directory (symlink)",
    });
    expect(await resolveScript(dir, "nope.sh")).toEqual({ why: "script not found" });
    expect(await resolveScript(dir, "scripts/ok.sh")).toEqual({
      why: "script not found — relative paths start in the scripts directory: write ok.sh",
    });
    expect(await resolveScript(dir, "scripts/nope.sh")).toEqual({ why: "script not found" });
    expect(await resolveScript(dir, ".")).toEqual({ why: "path leaves the scripts directory" });
    expect(await resolveScript(dir, "sub")).toEqual({
      why: "not a file (a script is one file under the scripts directory)",
    });
  });

  it("judges a path by where it leads: with scripts/ or the home a symlink, the script's real path is inside", async () => {
    home = tempHome();
    const disk = join(home.dir, "disk");
    home.write("disk/scripts/l.sh", "");
    home.write("disk/outside.sh", "");
    symlinkSync(join(disk, "outside.sh"), join(disk, "scripts", "out.sh"));
    // scripts/ linked to the disk, and a home that is itself a link to one (~/.svc on a volume).
    mkdirSync(join(home.dir, "h"));
    symlinkSync(join(disk, "scripts"), join(home.dir, "h", "scripts"));
    symlinkSync(disk, join(home.dir, "linked"));
    const real = join(disk, "scripts", "l.sh");
    for (const dir of [join(home.dir, "h", "scripts"), join(home.dir, "linked", "scripts")]) {
      expect(await resolveScript(dir, "l.sh"), dir).toEqual({ path: real });
      expect(await resolveScript(dir, real), dir).toEqual({ path: real });
      expect(await resolveScript(dir, join(dir, "l.sh")), dir).toEqual({ path: real });
      // Not there yet by its real path: not found (it runs once it is), not out of the directory.
      expect(await resolveScript(dir, join(disk, "scripts", "nope.sh")), dir).toEqual({
        why: "script not found",
      });
      expect(await resolveScript(dir, join(disk, "scripts", "out.sh")), dir).toEqual({
        why: "script resolves outside the scripts directory (symlink)",
      });
      expect(await resolveScript(dir, join(disk, "outside.sh")), dir).toEqual({
        why: "path leaves the scripts directory",
      });
      expect(await resolveScript(dir, "../outside.sh"), dir).toEqual({
        why: "path leaves the scripts directory",
      });
      expect(await resolveScript(dir, join(disk, "scripts")), dir).toEqual({
        why: "path leaves the scripts directory",
      });
    }
  });

  it("scripts/ a symlink to a disk not mounted: a script by its path there, or by its name, is not found (the link named), not out of the directory; found once the disk is back", async () => {
    home = tempHome();
    const disk = join(home.dir, "disk");
    mkdirSync(disk);
    mkdirSync(join(home.dir, "h"));
    const dir = join(home.dir, "h", "scripts");
    symlinkSync(join(disk, "scripts"), dir);
    // A relative link, as `ln -s ../disk/scripts` makes it.
    mkdirSync(join(home.dir, "r"));
    const relative = join(home.dir, "r", "scripts");
    symlinkSync(join("..", "disk", "scripts"), relative);
    const missing = {
      why: `script not found: the scripts directory (a symbolic link to ${join(disk, "scripts")}) is missing`,
    };
    for (const linked of [dir, relative]) {
      expect(await resolveScript(linked, join(disk, "scripts", "x.sh")), linked).toEqual(missing);
      expect(await resolveScript(linked, "x.sh"), linked).toEqual(missing);
      expect(await resolveScript(linked, join(linked, "x.sh")), linked).toEqual(missing);
      expect(await resolveScript(linked, join(disk, "x.sh")), linked).toEqual({
        why: "path leaves the scripts directory",
      });
      expect(await resolveScript(linked, "../x.sh"), linked).toEqual({
        why: "path leaves the scripts directory",
      });
    }
    // A link that leads to itself is not followed for ever, and is said to be a loop: it was said "(a symbolic
    // link to <itself>) is missing".
    const loop = join(home.dir, "loop");
    symlinkSync(loop, loop);
    expect(await resolveScript(loop, "x.sh")).toEqual({
      why: "script not found: the scripts directory is a symbolic link into a loop of links, or a chain of more than 40",
    });
    const two = join(home.dir, "two");
    symlinkSync("back", two);
    symlinkSync("two", join(home.dir, "back"));
    expect(await resolveScript(two, "x.sh")).toEqual({
      why: "script not found: the scripts directory is a symbolic link into a loop of links, or a chain of more than 40",
    });
    // Mounted again: the same paths name the script.
    home.write("disk/scripts/x.sh", "");
    const real = join(disk, "scripts", "x.sh");
    for (const linked of [dir, relative]) {
      expect(await resolveScript(linked, real), linked).toEqual({ path: real });
      expect(await resolveScript(linked, "x.sh"), linked).toEqual({ path: real });
    }
  });

  it("a relative scripts/ link under a home that is a link is resolved where the link really is, as the system resolves it", async () => {
    home = tempHome();
    // `ln -s real/home h2; ln -s ../disk/scripts real/home/scripts`, the disk not mounted: h2/scripts points to
    // real/disk/scripts (the link is in real/home), not to disk/scripts beside h2.
    mkdirSync(join(home.dir, "real", "home"), { recursive: true });
    symlinkSync(join(home.dir, "real", "home"), join(home.dir, "h2"));
    symlinkSync(join("..", "disk", "scripts"), join(home.dir, "real", "home", "scripts"));
    // Beside h2, a disk/ that is not it: taken for the link's target, it would be judged so.
    mkdirSync(join(home.dir, "disk"));
    const dir = join(home.dir, "h2", "scripts");
    const pointsTo = join(home.dir, "real", "disk", "scripts");
    const missing = {
      why: `script not found: the scripts directory (a symbolic link to ${pointsTo}) is missing`,
    };
    expect(await resolveScript(dir, "x.sh")).toEqual(missing);
    expect(await resolveScript(dir, join(pointsTo, "x.sh"))).toEqual(missing);
    expect(await resolveScript(dir, join(dir, "x.sh"))).toEqual(missing);
    expect(await resolveScript(dir, join(home.dir, "disk", "scripts", "x.sh"))).toEqual({
      why: "path leaves the scripts directory",
    });
    // Mounted: the script by its name and by its path on the disk.
    home.write("real/disk/scripts/x.sh", "");
    const real = join(pointsTo, "x.sh");
    expect(await resolveScript(dir, "x.sh")).toEqual({ path: real });
    expect(await resolveScript(dir, real)).toEqual({ path: real });
  });

  it("a `..` in a scripts/ link's text after a name that is a link goes up from where that link leads, as the system resolves it", async () => {
    home = tempHome();
    // `ln -s real/home h2; ln -s ../other/deep real/lnk; ln -s ../lnk/../disk/scripts real/home/scripts`, other/disk
    // not there yet: h2/scripts points to other/disk/scripts (lnk/.. is other/), not to real/disk/scripts.
    mkdirSync(join(home.dir, "real", "home"), { recursive: true });
    mkdirSync(join(home.dir, "other", "deep"), { recursive: true });
    symlinkSync(join(home.dir, "real", "home"), join(home.dir, "h2"));
    symlinkSync(join("..", "other", "deep"), join(home.dir, "real", "lnk"));
    // Written as is: path.join would collapse lnk/.. as the old resolution did.
    symlinkSync("../lnk/../disk/scripts", join(home.dir, "real", "home", "scripts"));
    const dir = join(home.dir, "h2", "scripts");
    const pointsTo = join(home.dir, "other", "disk", "scripts");
    const missing = {
      why: `script not found: the scripts directory (a symbolic link to ${pointsTo}) is missing`,
    };
    expect(await resolveScript(dir, "x.sh")).toEqual(missing);
    expect(await resolveScript(dir, join(pointsTo, "x.sh"))).toEqual(missing);
    expect(await resolveScript(dir, join(home.dir, "real", "disk", "scripts", "x.sh"))).toEqual({
      why: "path leaves the scripts directory",
    });
    // The disk there: the script by its name and by its path on the disk.
    home.write("other/disk/scripts/x.sh", "");
    const real = join(pointsTo, "x.sh");
    expect(await resolveScript(dir, "x.sh")).toEqual({ path: real });
    expect(await resolveScript(dir, real)).toEqual({ path: real });
  });

  it("scripts/ a link to another link to a disk not mounted: the message names where the chain leads, by way of the link between", async () => {
    home = tempHome();
    // `ln -s <disk>/scripts l1; ln -s l1 scripts`: l1 is there (a link); the disk is what is missing.
    const disk = join(home.dir, "disk");
    symlinkSync(join(disk, "scripts"), join(home.dir, "l1"));
    const dir = join(home.dir, "scripts");
    symlinkSync("l1", dir);
    // Seen: "(a symbolic link to <home>/l1) is missing".
    const missing = {
      why: `script not found: the scripts directory (a symbolic link to ${join(disk, "scripts")} (by way of ${join(home.dir, "l1")})) is missing`,
    };
    expect(await resolveScript(dir, "x.sh")).toEqual(missing);
    expect(await resolveScript(dir, join(disk, "scripts", "x.sh"))).toEqual(missing);
    home.write("disk/scripts/x.sh", "");
    const real = join(disk, "scripts", "x.sh");
    expect(await resolveScript(dir, "x.sh")).toEqual({ path: real });
  });

  it("a `..` in the script's path after a name that is a link goes up from where that link leads, as the system opens it", async () => {
    home = tempHome();
    const dir = join(home.dir, "scripts");
    // `ln -s <home>/elsewhere/deep scripts/out; ln -s a/b scripts/in`: out/../x.sh is elsewhere/x.sh (out of the
    // directory), in/../y.sh is scripts/a/y.sh; their text collapsed, they were scripts/x.sh and scripts/y.sh.
    home.write("scripts/x.sh", "");
    home.write("elsewhere/x.sh", "");
    mkdirSync(join(home.dir, "elsewhere", "deep"));
    symlinkSync(join(home.dir, "elsewhere", "deep"), join(dir, "out"));
    home.write("scripts/a/y.sh", "");
    mkdirSync(join(dir, "a", "b"));
    symlinkSync(join("a", "b"), join(dir, "in"));
    const out = { why: "script resolves outside the scripts directory (symlink)" };
    // Seen: { path: <home>/scripts/x.sh }, a file the path does not name.
    expect(await resolveScript(dir, "out/../x.sh")).toEqual(out);
    expect(await resolveScript(dir, `${dir}/out/../x.sh`)).toEqual(out);
    expect(await resolveScript(dir, "~/.svc/scripts/out/../x.sh")).toEqual(out);
    // Seen: "script not found" (scripts/y.sh).
    expect(await resolveScript(dir, "in/../y.sh")).toEqual({ path: join(dir, "a", "y.sh") });
    // A `..` after a name that is no link is as written.
    expect(await resolveScript(dir, "a/../x.sh")).toEqual({ path: join(dir, "x.sh") });
  });

  it("scripts/ a file, or a link to one, is said to be a file, not a directory, not just the script not found", async () => {
    home = tempHome();
    const notes = home.write("notes.txt", "a file, not a directory");
    const linked = join(home.dir, "linked");
    mkdirSync(linked);
    symlinkSync(join(home.dir, "l1"), join(linked, "scripts"));
    symlinkSync(notes, join(home.dir, "l1"));
    // Seen: "script not found", as for a typo in the script's name.
    expect(await resolveScript(join(linked, "scripts"), "x.sh")).toEqual({
      why: `script not found: the scripts directory (a symbolic link to ${notes} (by way of ${join(home.dir, "l1")})) is a file, not a directory`,
    });
    const plain = home.write("plain/scripts", "a file where the directory goes");
    expect(await resolveScript(plain, "x.sh")).toEqual({
      why: "script not found: the scripts directory is a file, not a directory",
    });
    expect(await resolveScript(plain, join(plain, "x.sh"))).toEqual({
      why: "script not found: the scripts directory is a file, not a directory",
    });
  });

  it("scripts/ in a loop of links reached through a name on the way, or past the system's 40 links by a `..` in a link's text, is said to be a loop, not missing", async () => {
    home = tempHome();
    const loop = {
      why: "script not found: the scripts directory is a symbolic link into a loop of links, or a chain of more than 40",
    };
    // `ln -s loopdir loopdir; ln -s loopdir/scripts scripts`: the loop is a directory on the way, not a link read
    // one by one. Seen: "(a symbolic link to <home>/loopdir/scripts) is missing".
    symlinkSync("loopdir", join(home.dir, "loopdir"));
    symlinkSync(join("loopdir", "scripts"), join(home.dir, "scripts"));
    expect(await resolveScript(join(home.dir, "scripts"), "x.sh")).toEqual(loop);
    // 40 links read one by one (long, l2 … l40), the last `lnk/../../disk/scripts` with lnk a link: the system
    // crosses 41 (ELOOP), the disk there or not. Seen: "(a symbolic link to <home>/disk/scripts (by way of …)) is
    // missing", and once the disk was there, "script not found".
    mkdirSync(join(home.dir, "links", "sub"), { recursive: true });
    symlinkSync("sub", join(home.dir, "links", "lnk"));
    symlinkSync("lnk/../../disk/scripts", join(home.dir, "links", "l40"));
    for (let i = 39; i >= 2; i--) symlinkSync(`l${i + 1}`, join(home.dir, "links", `l${i}`));
    const long = join(home.dir, "long");
    symlinkSync(join(home.dir, "links", "l2"), long);
    expect(await resolveScript(long, "x.sh")).toEqual(loop);
    home.write("disk/scripts/x.sh", "");
    expect(await resolveScript(long, "x.sh")).toEqual(loop);
    // One link fewer on the way: the script runs.
    const shorter = join(home.dir, "shorter");
    symlinkSync(join(home.dir, "links", "l3"), shorter);
    expect(await resolveScript(shorter, "x.sh")).toEqual({ path: join(home.dir, "disk", "scripts", "x.sh") });
  });

  // 70abc2ef asked realpath of the whole path before anything else: for a route whose script is missing, each
  // request's readlinks went from 16 to 28 (realpath reads every name of the path), and a start from 35 to 75.
  it("the chain of a path that is no link costs one readlink; a link's, the system's answer for the whole path too", () => {
    home = tempHome();
    const scripts = join(home.dir, "scripts");
    mkdirSync(scripts);
    expect(linkChainSyncCalls(scripts)).toEqual({ chain: [], calls: [`readlink ${scripts}`] });
    const missing = join(home.dir, "gone");
    expect(linkChainSyncCalls(missing)).toEqual({ chain: [], calls: [`readlink ${missing}`] });
    // A loop on the way fails that readlink itself.
    symlinkSync("loopdir", join(home.dir, "loopdir"));
    const below = join(home.dir, "loopdir", "scripts");
    expect(linkChainSyncCalls(below)).toEqual({ chain: undefined, calls: [`readlink ${below}`] });
    const link = join(home.dir, "s");
    symlinkSync("scripts", link);
    const { chain, calls } = linkChainSyncCalls(link);
    expect(chain).toEqual([scripts]);
    expect(calls).toContain(`realpath ${link}`);
  });

  it("a `..` after a name that is not there, or is a file, leads nowhere, as the system opens the path (ENOENT, ENOTDIR)", async () => {
    home = tempHome();
    const dir = join(home.dir, "scripts");
    home.write("scripts/x.sh", "");
    const notFound = { why: "script not found" };
    // Seen: { path: <home>/scripts/x.sh } for both.
    expect(await resolveScript(dir, "sub/../x.sh")).toEqual(notFound);
    expect(await resolveScript(dir, "x.sh/../x.sh")).toEqual(notFound);
    mkdirSync(join(dir, "sub"));
    expect(await resolveScript(dir, "sub/../x.sh")).toEqual({ path: join(dir, "x.sh") });
    // In a link's text too: with lnk -> gone, `lnk/../disk/scripts` is no directory until gone/ is made, and the
    // link is named as the system reads it.
    symlinkSync("gone", join(home.dir, "lnk"));
    const linked = join(home.dir, "linked");
    symlinkSync("lnk/../disk/scripts", linked);
    home.write("disk/scripts/y.sh", "");
    expect(await resolveScript(linked, "y.sh")).toEqual({
      why: `script not found: the scripts directory (a symbolic link to ${join(home.dir, "gone")}/../disk/scripts) is missing`,
    });
    mkdirSync(join(home.dir, "gone"));
    expect(await resolveScript(linked, "y.sh")).toEqual({ path: join(home.dir, "disk", "scripts", "y.sh") });
  });
});

describe("runScript: why an event was ignored, for the delivery history", () => {
  let home: TempHome;
  afterEach(() => home.cleanup());
  it("says what the script did (an exit code, a timeout, no such script), never what it wrote; the log's why keeps the stderr tail", async () => {
    home = tempHome();
    home.write("scripts/fail.sh", 'cat >/dev/null\necho "out-private"\necho "err-private" >&2\nexit 3\n');
    home.write("scripts/slow.sh", "cat >/dev/null\necho err-private >&2\nexec sleep 5\n");
    const run = (script: string, timeoutMs = 5000) =>
      runScript({ scriptsDir: join(home.dir, "scripts"), script, payload: {}, timeoutMs });
    const failed = await run("fail.sh");
    expect(failed).toMatchObject({ kind: "ignore", reason: "script exited with code 3" });
    expect(failed).toMatchObject({ why: "exited with code 3; stderr: err-private" });
    const slow = await run("slow.sh", 150);
    expect(slow).toMatchObject({ kind: "ignore", reason: "script timed out (script_timeout_seconds)" });
    expect((await run("nope.sh")) as unknown).toMatchObject({
      reason: "script cannot be run: script not found",
    });
    for (const result of [failed, slow])
      expect(JSON.stringify((result as { reason: string }).reason)).not.toContain("private");
  });
});

describe("skills and toolsets", () => {
  let home: TempHome;
  afterEach(() => home?.cleanup());
  it("the first listed skill that exists is loaded; unsafe names are skipped", async () => {
    home = tempHome();
    home.write("skills/b/SKILL.md", "B");
    home.write("skills/c/SKILL.md", "C");
    home.write("secret/SKILL.md", "no");
    const dir = join(home.dir, "skills");
    expect(await loadFirstSkill(dir, ["a", "b", "c"])).toEqual({ name: "b", text: "B" });
    expect(await loadFirstSkill(dir, ["../secret", "c"])).toEqual({ name: "c", text: "C" });
    expect(await loadFirstSkill(dir, undefined)).toBeUndefined();
  });
  it("a skills entry that is a path (cat/four) is refused with the name to write, not reported as a missing file", async () => {
    home = tempHome();
    home.write("skills/cat/four/SKILL.md", "FOUR");
    const dir = join(home.dir, "skills");
    const found = await findFirstSkill(dir, ["cat/four", "nope"]);
    expect(found.skill).toBeUndefined();
    expect(found.missing).toEqual(["nope"]);
    expect(found.refused).toEqual([
      {
        name: "cat/four",
        why: 'not a skill name (letters, digits, ".", "_" and "-", no path) — write four, the skill\'s directory name (found at skills/four/ or skills/<category>/four/)',
      },
    ]);
    expect(await loadFirstSkill(dir, ["four"])).toEqual({ name: "four", text: "FOUR" });
    const config = configSchema.parse({
      platforms: { webhook: { secret: "s", routes: { r: { skills: ["ok", "cat/four"] } } } },
    });
    expect(skillNameWarnings(routeTable(config), "config.yaml")).toEqual([
      expect.stringMatching(
        /^\[webhook\] config\.yaml: platforms\.webhook\.routes\.r\.skills: "cat\/four" is not a skill name .* write four,/,
      ),
    ]);
  });
  it("a category linked in as a symlink is searched; a link to nothing or to itself is no category and hides none after it", async () => {
    home = tempHome();
    home.write("shared/ops/deploy/SKILL.md", "DEPLOY");
    const dir = join(home.dir, "skills");
    mkdirSync(dir);
    symlinkSync(join(home.dir, "shared", "ops"), join(dir, "ops"));
    symlinkSync(join(dir, "a-loop"), join(dir, "a-loop"));
    symlinkSync(join(home.dir, "gone"), join(dir, "b-gone"));
    const found = await findFirstSkill(dir, ["deploy"]);
    expect(found).toEqual({
      skill: { name: "deploy", text: "DEPLOY" },
      missing: [],
      refused: [],
      unreadable: [],
    });
  });
  it("a skills entry that is the path of a SKILL.md file (cat/four/SKILL.md) is refused with the skill's name to write, not SKILL.md", async () => {
    home = tempHome();
    home.write("skills/cat/four/SKILL.md", "FOUR");
    const dir = join(home.dir, "skills");
    const write = (name: string) =>
      `not a skill name (letters, digits, ".", "_" and "-", no path) — write ${name}, the skill's directory name (found at skills/${name}/ or skills/<category>/${name}/)`;
    const found = await findFirstSkill(dir, ["cat/four/SKILL.md", "~/.svc/skills/four/skill.md", "four"]);
    expect(found.refused).toEqual([
      { name: "cat/four/SKILL.md", why: write("four") },
      { name: "~/.svc/skills/four/skill.md", why: write("four") },
    ]);
    expect(found.skill).toEqual({ name: "four", text: "FOUR" });
  });
  it("a SKILL.md that is there but cannot be read is reported as unreadable, naming the file, not as missing", async () => {
    home = tempHome();
    // A directory of that name: readFile fails with EISDIR, as a file the gateway's user may not read fails with EACCES.
    home.write("skills/broken/SKILL.md/keep", "");
    home.write("skills/cat/nested/SKILL.md/keep", "");
    home.write("skills/good/SKILL.md", "GOOD");
    const dir = join(home.dir, "skills");
    const found = await findFirstSkill(dir, ["broken", "nested", "absent", "good"]);
    expect(found.skill).toEqual({ name: "good", text: "GOOD" });
    expect(found.missing).toEqual(["absent"]);
    expect(found.unreadable).toEqual([
      {
        name: "broken",
        why: `${join(dir, "broken", "SKILL.md")} cannot be read (EISDIR) — check that it is a file the gateway's user may read`,
      },
      {
        name: "nested",
        why: `${join(dir, "cat", "nested", "SKILL.md")} cannot be read (EISDIR) — check that it is a file the gateway's user may read`,
      },
    ]);
  });
  it("route toolsets replace the default; unknown names are dropped; svc-webhook names the default set", () => {
    const dropped: string[] = [];
    expect(runToolsets(undefined)).toEqual(DEFAULT_WEBHOOK_TOOLSETS);
    expect(runToolsets(["terminal", "bogus"], (n) => dropped.push(n))).toEqual(["terminal"]);
    expect(dropped).toEqual(["bogus"]);
    expect(runToolsets(["svc-webhook", "file"])).toEqual([...DEFAULT_WEBHOOK_TOOLSETS, "file"]);
    expect(runToolsets([])).toEqual([]);
  });
  it("a route as another instance accepted it: names none of this gateway's servers narrow the run to no MCP tools", () => {
    const isServer = (name: string) => name === "notes";
    expect(runToolsets(["gone"], undefined, isServer)).toEqual([]);
    expect(runToolsets(["gone"], undefined, isServer, true)).toEqual(["no_mcp"]);
    expect(runToolsets(["terminal", "gone"], undefined, isServer, true)).toEqual(["terminal", "no_mcp"]);
    expect(runToolsets(["gone", "notes"], undefined, isServer, true)).toEqual(["notes"]);
    expect(runToolsets(["terminal"], undefined, isServer, true)).toEqual(["terminal"]);
  });
});

describe("route registry", () => {
  it("static routes win over dynamic ones of the same name; the global secret is the fallback", () => {
    const config = configSchema.parse({
      platforms: {
        webhook: { enabled: true, secret: "global", routes: { gh: { secret: "own" }, plain: {} } },
      },
    });
    const subscription = { deliver: "log", deliver_only: false, mirror_to_session: false };
    const dynamic = {
      lookup: (n: string) => (n === "gh" || n === "dyn" ? subscription : undefined),
      current: () =>
        new Map([
          ["gh", subscription],
          ["dyn", subscription],
        ]),
    };
    const registry = createRouteRegistry(routeTable(config), dynamic);
    expect(registry.lookup("gh")?.secret).toBe("own");
    expect(registry.lookup("plain")?.secret).toBe("global");
    expect(registry.lookup("dyn")).toMatchObject({ name: "dyn", secret: "global", profile: "default" });
    expect(registry.names()).toEqual(["gh", "plain", "dyn"]);
  });
});

describe("runs queue actor", () => {
  const event = (id: string): AcceptedEvent => ({
    routeName: "r",
    route: {} as AcceptedEvent["route"],
    profile: "default",
    event: undefined,
    deliveryId: id,
    payload: { n: id },
    headers: { "x-request-id": id },
    prompt: `run ${id}`,
    extra: {},
    receivedAt: 0,
  });

  it("runs at most maxConcurrent at once, in order, and a failing run is logged without stopping the queue", async () => {
    const started: string[] = [];
    const finish = new Map<string, (ok: boolean) => void>();
    const errors: string[] = [];
    const logger = silentLogger();
    logger.error = ((obj: { delivery_id: string }) =>
      void errors.push(obj.delivery_id)) as typeof logger.error;
    const actor = createActor(runsMachine, {
      input: {
        maxConcurrent: 2,
        logger,
        execute: (e) =>
          new Promise<void>((resolve, reject) => {
            started.push(e.deliveryId);
            finish.set(e.deliveryId, (ok) => (ok ? resolve() : reject(new Error("boom"))));
          }),
      },
    }).start();
    for (const id of ["a", "b", "c", "d"]) actor.send({ type: "enqueue", event: event(id) });
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(["a", "b"]);
    expect(unfinishedRuns(actor).map((e) => e.deliveryId)).toEqual(["a", "b", "c", "d"]);
    finish.get("a")?.(false);
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(["a", "b", "c"]);
    expect(errors).toEqual(["a"]);
    finish.get("b")?.(true);
    finish.get("c")?.(true);
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(["a", "b", "c", "d"]);
    finish.get("d")?.(true);
    expect(await drainRuns(actor, 1000)).toBe(true);
    expect(actor.getSnapshot().context.queue.isIdle()).toBe(true);
    expect(Object.keys(actor.getSnapshot().children)).toEqual(["run-slot-1", "run-slot-2"]);
    actor.stop();
  });

  it("a queued run starts on a later turn of the event loop: the request that queued it is answered (202) first", async () => {
    const started: string[] = [];
    const actor = createActor(runsMachine, {
      input: {
        maxConcurrent: 2,
        logger: silentLogger(),
        execute: async (e) => void started.push(e.deliveryId),
      },
    }).start();
    expect(enqueueRun(actor, event("a"), 10)).toBe(true);
    // An idle slot does not start the agent (a process spawn costs milliseconds) inside the request handler.
    expect(started).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(["a"]);
    actor.stop();
  });

  it("enqueueRun refuses past the waiting cap (the caller answers 503) and takes events again once there is room", async () => {
    const actor = createActor(runsMachine, {
      input: { maxConcurrent: 1, logger: silentLogger(), execute: () => new Promise<void>(() => {}) },
    }).start();
    expect(enqueueRun(actor, event("running"), 2)).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(enqueueRun(actor, event("w1"), 2)).toBe(true);
    expect(enqueueRun(actor, event("w2"), 2)).toBe(true);
    expect(enqueueRun(actor, event("w3"), 2)).toBe(false);
    expect(unfinishedRuns(actor).map((e) => e.deliveryId)).toEqual(["running", "w1", "w2"]);
    // A waiting run keeps what the run reads, not the parsed payload or the request headers.
    for (const run of unfinishedRuns(actor)) {
      expect(run).not.toHaveProperty("payload");
      expect(run).not.toHaveProperty("headers");
    }
    actor.stop();
  });
});
