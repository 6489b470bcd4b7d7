import fs, { readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { join } from "node:path";
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { createRouteRegistry, routeTable } from "../../../src/actors/routes.js";
import { configSchema } from "../../../src/config/schema.js";
import { idleKeys, subscriptionWarnings } from "../../../src/gateway/idleRouteKeys.js";
import { servedSubscriptionWarnings } from "../../../src/gateway/routeWarnings.js";
import { RACY_WINDOW_MS } from "../../../src/io/fileStamp.js";
import { createLogger } from "../../../src/io/log.js";
import {
  activeSubscriptions,
  createSubscriptionSource,
  subscriptionRoute,
  subscriptionSchema,
  subscriptionStore,
} from "../../../src/io/stores/subscriptions.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

function setup() {
  home = tempHome();
  const file = join(home.dir, "webhook_subscriptions.json");
  const lines: string[] = [];
  const logger = createLogger({ stdout: false, file: join(home.dir, "log.jsonl") });
  logger.error = ((msg: string) => void lines.push(msg)) as typeof logger.error;
  logger.info = (() => {}) as typeof logger.info;
  return { file, lines, source: createSubscriptionSource(file, logger, { loopback: false }) };
}

/** The store is keyed by route name (spec 2.6), as a user writes it by hand. */
const doc = (records: Record<string, unknown>) => JSON.stringify(records);

describe("dynamic subscription source", () => {
  it("serves enabled valid records as routes, drops disabled, invalid and non-loopback INSECURE_NO_AUTH records, keeps hand-edited toolsets", () => {
    const { file, lines, source } = setup();
    writeFileSync(
      file,
      doc({
        ok: { secret: "s", toolsets: ["web"], description: "d", enabled: true, created_at: "t" },
        off: { secret: "s", enabled: false },
        bad: { secret: "s", deliver_only: true },
        typo: { secret: "s", colaesce: {} },
        open: { secret: "INSECURE_NO_AUTH" },
      }),
    );
    expect(source.names()).toEqual(["ok"]);
    expect(source.lookup("ok")).toEqual({
      secret: "s",
      toolsets: ["web"],
      deliver: "log",
      deliver_only: false,
      mirror_to_session: false,
    });
    expect(source.lookup("off")).toBeUndefined();
    expect(lines.join("\n")).toMatch(
      /bad ignored: .*subscriptions\.json: bad\.deliver_only: true needs a real delivery target/,
    );
    expect(lines.join("\n")).toMatch(/typo ignored/);
    expect(lines.join("\n")).toContain(
      "open ignored: INSECURE_NO_AUTH is only allowed on a loopback bind (127.0.0.1, localhost, ::1) — give it a real secret (svc webhook subscribe open --secret <secret>) or bind to 127.0.0.1",
    );
  });

  it("re-reads only when the file's metadata changed", () => {
    const { file, source } = setup();
    const when = new Date("2026-11-22T12:00:00Z");
    writeFileSync(file, doc({ aa: { secret: "s" } }));
    utimesSync(file, when, when);
    expect(source.names()).toEqual(["aa"]);
    // Nothing changed, and the file's last change (its ctime: just now) is past the racy window: one
    // stat, no read on the hot path.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + RACY_WINDOW_MS + 1000 });
    onTestFinished(() => void vi.useRealTimers());
    expect(source.names()).toEqual(["aa"]); // the look that finds it no longer young
    const read = fs.readFileSync;
    let reads = 0;
    fs.readFileSync = ((path: fs.PathOrFileDescriptor, ...rest: never[]) => {
      if (path === file) reads++;
      return read(path, ...rest);
    }) as typeof fs.readFileSync;
    syncBuiltinESMExports();
    try {
      expect(source.names()).toEqual(["aa"]);
      expect(source.lookup("aa")?.secret).toBe("s");
    } finally {
      fs.readFileSync = read;
      syncBuiltinESMExports();
    }
    expect(reads).toBe(0);
    // A real change (new mtime) is picked up on the next call.
    writeFileSync(file, doc({ bb: { secret: "s" } }));
    utimesSync(file, when, new Date(when.getTime() + 5000));
    expect(source.names()).toEqual(["bb"]);
  });

  it("a same-size edit in place whose mtime is set back (touch -r, an editor keeping timestamps) is seen: its change time moved", () => {
    const { file, source } = setup();
    const when = new Date("2026-11-22T12:00:00Z");
    writeFileSync(file, doc({ aa: { secret: "s1" } }));
    utimesSync(file, when, when);
    expect(source.lookup("aa")?.secret).toBe("s1");
    const before = statSync(file);
    writeFileSync(file, doc({ aa: { secret: "s2" } }));
    utimesSync(file, when, when);
    const after = statSync(file);
    // Same inode, size and (old) mtime; only the change time, which no one can set back, tells.
    expect([after.ino, after.size, after.mtimeMs]).toEqual([before.ino, before.size, before.mtimeMs]);
    expect(source.lookup("aa")?.secret).toBe("s2");
  });

  it("a same-size rewrite in the timestamp tick of the last read (same inode, size and mtime) is still seen", () => {
    const { file, source } = setup();
    const tick = new Date(Date.now() - 1); // a write the moment before the gateway read the file
    writeFileSync(file, doc({ aa: { secret: "s1" } }));
    utimesSync(file, tick, tick);
    expect(source.lookup("aa")?.secret).toBe("s1");
    const before = statSync(file);
    writeFileSync(file, doc({ aa: { secret: "s2" } }));
    utimesSync(file, tick, tick);
    const after = statSync(file);
    expect([after.ino, after.size, after.mtimeMs]).toEqual([before.ino, before.size, before.mtimeMs]);
    expect(source.lookup("aa")?.secret).toBe("s2");
  });

  it("keeps the last good set when the file becomes corrupt, and logs it; an absent file means no subscriptions", () => {
    const { file, lines, source } = setup();
    writeFileSync(file, doc({ aa: { secret: "s" } }));
    expect(source.names()).toEqual(["aa"]);
    writeFileSync(file, "{ broken");
    expect(source.names()).toEqual(["aa"]);
    expect(
      lines.some((l) => l.includes("not valid JSON") && l.includes("keeping the last good set of 1")),
    ).toBe(true);
    home.cleanup();
    expect(source.names()).toEqual([]);
  });

  it("a file removed while subscriptions were served is logged once (WARN): they now answer 404", () => {
    home = tempHome();
    const file = join(home.dir, "webhook_subscriptions.json");
    const log = captureLogger();
    const source = createSubscriptionSource(file, log.logger, { loopback: false });
    // No file at all (the usual start): nothing to say.
    expect(source.names()).toEqual([]);
    expect(log.messages().filter((m) => m.includes("is gone"))).toEqual([]);
    writeFileSync(file, doc({ deploys: { secret: "s-deploys" }, builds: { secret: "s-builds" } }));
    expect(source.names()).toHaveLength(2);
    rmSync(file);
    expect(source.names()).toEqual([]);
    expect(source.names()).toEqual([]);
    const gone = log.lines().filter((l) => l.includes("is gone"));
    expect(gone).toHaveLength(1);
    expect(JSON.parse(gone[0] ?? "{}")).toMatchObject({
      level: 40,
      msg: `[webhook] ${file} is gone: its 2 dynamic subscription(s) are no longer served (404) — restore the file or create them again with svc webhook subscribe`,
    });
  });

  it("a young corrupt file is parsed once, not again on every lookup of its racy window", () => {
    const { file, lines, source } = setup();
    writeFileSync(file, '{\n  "aa": {"secret": TOKEN}\n}');
    expect(source.names()).toEqual([]);
    expect(lines).toEqual([expect.stringContaining("not valid JSON at line 2, column 20")]);
    const parse = vi.spyOn(JSON, "parse");
    try {
      for (let i = 0; i < 5; i++) expect(source.names()).toEqual([]);
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
    expect(lines).toHaveLength(1);
  });

  it("the gateway's list of its routes reads a young file once, not once per subscription (2000 reads of a 600 KB file blocked a scrape for 2 s)", () => {
    const { file, source } = setup();
    const records: Record<string, unknown> = {};
    for (let i = 0; i < 200; i++)
      records[`sub${i}`] = { secret: `s${i}`, profile: i === 150 ? "ops" : undefined };
    writeFileSync(file, doc(records)); // just written: in its racy window, each look reads its bytes
    const config = configSchema.parse({
      platforms: { webhook: { enabled: true, routes: { gh: { secret: "own" }, sub0: { secret: "x" } } } },
    });
    const registry = createRouteRegistry(routeTable(config), source);
    const read = fs.readFileSync;
    let reads = 0;
    fs.readFileSync = ((path: fs.PathOrFileDescriptor, ...rest: never[]) => {
      if (path === file) reads++;
      return read(path, ...rest);
    }) as typeof fs.readFileSync;
    syncBuiltinESMExports();
    try {
      const names = registry.names();
      expect(names).toHaveLength(201);
      expect(names.slice(0, 3)).toEqual(["gh", "sub0", "sub1"]);
      expect(registry.routes().find((route) => route.profile === "ops")?.name).toBe("sub150");
    } finally {
      fs.readFileSync = read;
      syncBuiltinESMExports();
    }
    // One look per call (its bytes, then the parse of a changed file): not one per subscription.
    expect(reads).toBeLessThanOrEqual(4);
  });

  it("reads a store of an earlier version ({revision, subscriptions}) and rewrites it keyed by route name", async () => {
    const { file, source } = setup();
    writeFileSync(file, JSON.stringify({ revision: 3, subscriptions: { aa: { secret: "s" } } }));
    expect(source.names()).toEqual(["aa"]);
    await subscriptionStore(file).update((r) => {
      r.bb = { secret: "t" };
    });
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ aa: { secret: "s" }, bb: { secret: "t" } });
  });

  it("store writes are atomic, 0600, keyed by route name; a stale revision is refused", async () => {
    const { file } = setup();
    const store = subscriptionStore(file);
    const empty = store.read().revision;
    const first = await store.update((r) => {
      r.aa = { secret: "s" };
    });
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ aa: { secret: "s" } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(store.read().revision).toBe(first.revision);
    await store.update((r) => void delete r.aa, first.revision);
    await expect(
      store.update((r) => {
        r.aa = { secret: "s" };
      }, first.revision),
    ).rejects.toThrow("the subscription store changed since it was read — run the command again");
    await expect(store.update(() => {}, empty)).rejects.toThrow("changed since it was read");
    expect(store.read().records).toEqual({});
  });
});

describe("a subscription without a secret of its own", () => {
  const noSecret = { gh: { prompt: "p" } };
  const infoLines = (hasGlobalSecret: boolean) => {
    const log = captureLogger();
    activeSubscriptions("subs.json", noSecret, log.logger, { hasGlobalSecret: () => hasGlobalSecret });
    return log.messages().filter((msg) => msg.includes("has no secret of its own"));
  };

  it("is said to use the global secret only when one is set (with none, the gateway warns that it is not served)", () => {
    expect(infoLines(true)).toEqual([
      "[webhook] dynamic subscription gh has no secret of its own: the global secret applies",
    ]);
    expect(infoLines(false)).toEqual([]);
  });

  it("with no global secret, each load names it at WARN as not served (a hand edit while the gateway runs, not only at start)", () => {
    const log = captureLogger();
    const served = activeSubscriptions("subs.json", noSecret, log.logger, { hasGlobalSecret: () => false });
    // Kept: a reload that sets a global secret serves it without a change of the file.
    expect([...served.keys()]).toEqual(["gh"]);
    expect(log.messages().filter((msg) => msg.includes("not served"))).toEqual([
      "[webhook] dynamic subscription gh is enabled but not served (404): no secret of its own and no global secret (platforms.webhook.secret or WEBHOOK_SECRET) — set one with svc webhook subscribe gh --secret <secret>",
    ]);
  });
});

describe("a served subscription whose keys leave others without effect", () => {
  it("is logged at WARN with what the injected check names (the gateway passes its idle-key check)", () => {
    const log = captureLogger();
    const served = activeSubscriptions(
      "subs.json",
      { fire: { secret: "s", cron_job: "triage", deliver: "chat_1" }, plain: { secret: "s" } },
      log.logger,
      { routeWarnings: idleKeys },
    );
    expect([...served.keys()]).toEqual(["fire", "plain"]);
    const lines = log.messages().filter((msg) => msg.includes("no effect"));
    expect(lines).toEqual([
      expect.stringMatching(
        /^\[webhook\] dynamic subscription fire: deliver has no effect on a cron_job route — job triage runs with its own target/,
      ),
    ]);
  });
});

describe("a served subscription whose events entry never matches", () => {
  it("is logged at WARN by the gateway's check (subscriptionWarnings: events entries, then idle keys)", () => {
    const log = captureLogger();
    activeSubscriptions(
      "subs.json",
      { all: { secret: "s", events: ["*"], cron_job: "triage", deliver: "chat_1" } },
      log.logger,
      { routeWarnings: subscriptionWarnings },
    );
    expect(log.messages().filter((msg) => msg.startsWith("[webhook] dynamic subscription all:"))).toEqual([
      '[webhook] dynamic subscription all: events[0]: "*" never matches: events compares the exact event type and has no wildcard — leave events out (or empty) to accept every event',
      expect.stringMatching(
        /^\[webhook\] dynamic subscription all: deliver has no effect on a cron_job route/,
      ),
    ]);
  });
});

describe("a served subscription bound to a profile it cannot keep", () => {
  it("is logged at WARN like a config.yaml route's profile: not enforced with multiplexing off", () => {
    const log = captureLogger();
    activeSubscriptions(
      "subs.json",
      { bound: { secret: "s", profile: "work" }, plain: { secret: "s", profile: "default" } },
      log.logger,
      {
        routeWarnings: (route, name) =>
          subscriptionWarnings(route, name, () => ({
            multiplex: false,
            profiles: ["default", "work"],
            profilesDir: "/home/p",
          })),
      },
    );
    expect(log.messages().filter((msg) => msg.includes("profile"))).toEqual([
      "[webhook] dynamic subscription bound: the binding to profile work is not enforced — gateway.multiplex_profiles is off, so the route answers at /webhooks/bound; set gateway.multiplex_profiles: true to serve it at /p/work/webhooks/bound only",
    ]);
  });
});

describe("a served subscription with toolsets or skills written by hand", () => {
  it("names an unknown toolset (with the likely spelling) and a skill written as a path at each load, as a config.yaml route's are named at start", () => {
    const log = captureLogger();
    const served = activeSubscriptions(
      "subs.json",
      {
        tools: { secret: "s", toolsets: ["terminal", "web_serch", "docs"], skills: ["skills/triage", "ok"] },
      },
      log.logger,
      {
        routeWarnings: (route, name) =>
          servedSubscriptionWarnings(
            route,
            name,
            () => ({ multiplex: false, profiles: [], profilesDir: "/home/p" }),
            ["docs"],
          ),
      },
    );
    expect([...served.keys()]).toEqual(["tools"]);
    const lines = log.messages().filter((msg) => msg.includes("toolset"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\[webhook\] dynamic subscription tools: toolsets: unknown toolset "web_serch" — did you mean web_search\?; runs of the route drop it \(known: /,
    );
    expect(log.messages().filter((msg) => msg.includes("skills:"))).toEqual([
      '[webhook] dynamic subscription tools: skills: "skills/triage" is not a skill name (letters, digits, ".", "_" and "-", no path) — write triage, the skill\'s directory name (found at skills/triage/ or skills/<category>/triage/)',
    ]);
  });
});

describe("a subscription a config.yaml route of the same name shadows", () => {
  it("is named at each load as not served, with the route's key, instead of its other warnings", () => {
    const log = captureLogger();
    const routes = { ci: subscriptionRoute(subscriptionSchema.parse({ secret: "t" })) };
    activeSubscriptions(
      "subs.json",
      { ci: { secret: "s", toolsets: ["web_serch"] }, other: { secret: "s" } },
      log.logger,
      {
        routeWarnings: (route, name) =>
          servedSubscriptionWarnings(
            route,
            name,
            () => ({ multiplex: false, profiles: [], profilesDir: "/home/p" }),
            [],
            { routes, file: "/home/config.yaml" },
          ),
      },
    );
    expect(log.messages().filter((msg) => msg.startsWith("[webhook] dynamic subscription"))).toEqual([
      "[webhook] dynamic subscription ci: not served: /home/config.yaml has a route of the same name (platforms.webhook.routes.ci), which wins — rename one of them, or svc webhook remove ci",
    ]);
  });
});
