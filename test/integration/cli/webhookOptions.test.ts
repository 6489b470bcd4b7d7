import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc, svcEach } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const stored = () => JSON.parse(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8"));

describe("svc webhook subscribe options (spec 4.3) and usage errors", { timeout: 90_000 }, () => {
  it("parser errors (missing argument, unknown option, unknown command) exit 2 with the reason on stderr", async () => {
    home = tempHome();
    const [missing, unknownOption, unknownCommand, badPayload, curlFile, skills, coalesce, filters, script] =
      await svcEach(home, [
        ["webhook", "subscribe"],
        ["webhook", "subscribe", "gh", "--toolsets", "terminal"],
        ["webhook", "frob"],
        ["webhook", "test", "gh", "--payload", "{bad"],
        ["webhook", "test", "gh", "--payload", "@push.json"],
        ["webhook", "subscribe", "gh", "--skills", "triage"],
        ["webhook", "subscribe", "gh", "--coalesce", "pull_request.number"],
        ["webhook", "subscribe", "gh", "--filters", "[]"],
        ["webhook", "subscribe", "gh", "--script", "scripts/a.py"],
      ]);
    // The other route properties a record holds (spec 2.6) that no option sets: refused saying where they
    // are written, rather than a bare unknown option.
    for (const [refused, key, shape] of [
      [skills, "skills", '["<skill>"]'],
      [coalesce, "coalesce", '{"key": "<payload path>", "window_seconds": 30, "max_wait_seconds": 300}'],
      [filters, "filters", '[{"field": "<payload path>", ...}]'],
      [script, "script", '"<path>"'],
    ] as const)
      expect(refused).toMatchObject({
        code: 2,
        stderr: expect.stringContaining(
          `unknown option '--${key}': no option sets a subscription's ${key} — edit "${key}": ${shape} into the gh record of ${join(home.dir, "webhook_subscriptions.json")} by hand`,
        ),
      });
    expect(stored.bind(null)).toThrow(); // nothing was written
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining("missing required argument") });
    expect(unknownOption).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("unknown option '--toolsets'"),
    });
    // Spec: no option sets toolsets; the refusal says where they are set instead.
    expect(unknownOption.stderr).toContain('edit "toolsets": [...] into the gh record of ');
    const profile = await svc(home, ["webhook", "subscribe", "gh", "--profile", "work"]);
    expect(profile).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        "unknown option '--profile' — the profile that runs the subscription is --route-profile work",
      ),
    });
    expect(unknownCommand).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown command") });
    // Checked before the route is looked up (there is none here): the mistake is in the option.
    expect(badPayload).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(
        /^svc: --payload: not valid JSON at character 2 \(.*\) — give a JSON object/,
      ),
    });
    // curl's @file: svc reads no file, and says how to give the file's text instead.
    expect(curlFile).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        `--payload: @push.json is how curl reads a file, which svc does not do: give the JSON itself, e.g. --payload "$(cat push.json)"`,
      ),
    });
    const help = await svc(home, ["webhook", "subscribe", "--help"]);
    expect(help.code).toBe(0);
    for (const option of [
      "--events",
      "--prompt",
      "--deliver ",
      "--deliver-chat-id",
      "--deliver-only",
      "--cron-job",
      "--description",
      "--route-profile",
      "--secret",
      "--mirror-to-session",
    ])
      expect(help.stdout).toContain(option);
    expect(help.stdout).not.toContain("toolsets");
  });

  it("--events with a * (no wildcard: events are compared exactly) is warned about", async () => {
    home = tempHome();
    const wild = await svc(home, ["webhook", "subscribe", "all", "--events", "*,pull_request.*"]);
    expect(wild.code).toBe(0);
    expect(wild.stderr).toContain(
      'Warning: all: --events "*" never matches: event types are compared exactly, with no wildcard — leave out --events to accept every event',
    );
    expect(wild.stderr).toContain('Warning: all: --events "pull_request.*" never matches');
  });

  it("--events pull_request.opened (a GitHub event with its action) is warned about, with the filter that selects the action", async () => {
    home = tempHome();
    const qualified = await svc(home, [
      "webhook",
      "subscribe",
      "prs",
      "--events",
      "pull_request.opened,invoice.paid",
    ]);
    expect(qualified.code).toBe(0);
    expect(qualified.stderr).toContain(
      'Warning: prs: --events "pull_request.opened" never matches a GitHub, Gitea or Forgejo event: they send pull_request as the event type and opened in the body\'s action — list pull_request and add a filter {field: action, in: [opened]}',
    );
    expect(qualified.stderr).not.toContain("invoice.paid");
  });

  it("an event type given twice (in one --events list or by repeating the option) is stored and listed once", async () => {
    home = tempHome();
    const twice = await svc(home, [
      "webhook",
      "subscribe",
      "deploys",
      "--events",
      "push, release,push",
      "--events",
      "release",
    ]);
    expect(twice.code).toBe(0);
    expect(stored().deploys.events).toEqual(["push", "release"]);
    const listed = await svc(home, ["webhook", "list"]);
    expect(listed.stdout.split("\n")[1]).toMatch(/^deploys\s+push,release\s+log\s/);
  });

  it("a new subscription named as a static route of config.yaml is written, with a warning that the static route wins while it is there", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: {
          webhook: { enabled: true, host: "127.0.0.1", routes: { gh: { secret: "static-one" } } },
        },
      }),
    );
    const shadowed = await svc(home, ["webhook", "subscribe", "gh", "--events", "push"]);
    expect(shadowed.code).toBe(0);
    expect(shadowed.stderr).toContain(
      `Warning: config.yaml also defines a static route "gh"; the static route wins over this subscription while it is there`,
    );
    expect(shadowed.stdout).toContain(`Secret: ${stored().gh.secret}\n`);
    expect(stored().gh.events).toEqual(["push"]);
  });

  it("an empty --events entry beside event types (an unset shell variable, or '' given with others) is refused, quoted as given, nothing written", async () => {
    home = tempHome();
    const refused = await svcEach(home, [
      ["webhook", "subscribe", "gh", "--events", "push", "--events", ""],
      ["webhook", "subscribe", "gh", "--events", "push,"],
    ]);
    expect(refused.map((r) => r.code)).toEqual([2, 2]);
    expect(refused[0]?.stderr).toContain(
      `cannot subscribe gh: --events "push" --events "" has an empty entry beside its event types (an unset shell variable?) — remove it, or give --events '' alone to accept every event`,
    );
    expect(refused[1]?.stderr).toContain('--events "push," has an empty entry');
    expect(stored.bind(null)).toThrow(); // nothing was written
  });

  it("--events of only commas and spaces is refused, nothing written; --events '' alone accepts every event again", async () => {
    home = tempHome();
    const [commas, repeatedEmpty] = await svcEach(home, [
      ["webhook", "subscribe", "gh", "--events", ", ,"],
      ["webhook", "subscribe", "gh", "--events", "", "--events", " "],
    ]);
    for (const refused of [commas, repeatedEmpty]) expect(refused.code).toBe(2);
    expect(commas.stderr).toContain(
      `cannot subscribe gh: --events ", ," names no event type — list them (--events push,pull_request), or give --events '' alone to accept every event`,
    );
    expect(repeatedEmpty.stderr).toContain('--events "" --events " " names no event type');
    expect(stored.bind(null)).toThrow(); // nothing was written
    expect((await svc(home, ["webhook", "subscribe", "gh", "--events", "push"])).code).toBe(0);
    expect((await svc(home, ["webhook", "subscribe", "gh", "--events", ""])).code).toBe(0);
    expect(stored().gh.events).toEqual([]);
  });

  it("--deliver-chat-id or --deliver-extra on a log route is stored, with a warning that it does nothing there", async () => {
    home = tempHome();
    const logged = await svc(home, ["webhook", "subscribe", "gh", "--deliver-chat-id", "123"]);
    expect(logged.code).toBe(0);
    expect(logged.stderr).toContain(
      "Warning: gh: --deliver-chat-id has no effect while the target is log (replies go to the gateway log) — add --deliver <target>",
    );
    expect(stored().gh.deliver_extra).toEqual({ chat_id: "123" });
    const mirrored = await svc(home, ["webhook", "subscribe", "gh", "--mirror-to-session"]);
    expect(mirrored.stderr).toContain(
      "Warning: gh: --mirror-to-session has no effect while the target is log",
    );
    const chat = await svc(home, ["webhook", "subscribe", "gh", "--deliver", "chat_1"]);
    expect(chat.stderr).not.toContain("no effect");
  });

  it("--deliver or a chat id on a cron route, and --mirror-to-session with a target that is no chat, are stored with a warning that they do nothing", async () => {
    home = tempHome();
    await svc(home, ["cron", "create", "--name", "triage", "--schedule", "1h", "--prompt", "p"]);
    const [target, chat, mirror] = await svcEach(home, [
      ["webhook", "subscribe", "a", "--cron-job", "triage", "--deliver", "chat_1"],
      ["webhook", "subscribe", "b", "--cron-job", "triage", "--deliver-chat-id", "9"],
      [
        "webhook",
        "subscribe",
        "c",
        "--deliver",
        "forge_comment",
        "--deliver-extra",
        "repo=o/r",
        "--deliver-extra",
        "pr_number=1",
        "--mirror-to-session",
      ],
    ]);
    expect(target).toMatchObject({ code: 0 });
    expect(target.stderr).toContain(
      "Warning: a: deliver has no effect on a cron_job route — job triage runs with its own target",
    );
    // Not "add --deliver <target>": the job's target is what a cron route delivers to.
    expect(chat.stderr).toContain("Warning: b: deliver_extra has no effect on a cron_job route");
    expect(chat.stderr).not.toContain("while the target is log");
    expect(mirror.stderr).toContain(
      "Warning: c: mirror_to_session has no effect with deliver: forge_comment — only chat deliveries are mirrored",
    );
    // Extras kept from a chat target, once --deliver log makes the replies go to the log.
    await svc(home, ["webhook", "subscribe", "d", "--deliver", "chat_1", "--deliver-chat-id", "7"]);
    const toLog = await svc(home, ["webhook", "subscribe", "d", "--deliver", "log"]);
    expect(toLog.stderr).toContain("Warning: d: deliver_extra has no effect while deliver is log");
    // The fix in the command's own terms, not config.yaml's (deliver: telegram).
    expect(toLog.stderr).toContain(
      "Deliver to a target with: svc webhook subscribe d --deliver <target>; or remove it with: svc webhook subscribe d --deliver-extra chat_id=\n",
    );
    expect(stored()).toMatchObject({
      a: { cron_job: "triage", deliver: "chat_1" },
      b: { cron_job: "triage", deliver_extra: { chat_id: "9" } },
      c: { mirror_to_session: true },
    });
  });

  it("--route-profile with multiplexing off notes that the binding is not enforced, naming where off comes from", async () => {
    home = tempHome();
    const bare = await svc(home, ["webhook", "subscribe", "a", "--route-profile", "work"]);
    // No config.yaml: the embedded default is in use, so no file says "off".
    expect(bare.stderr).toContain(
      `Note: gateway.multiplex_profiles is off (there is no ${join(home.dir, "config.yaml")}, and off is the default), so the binding to profile work is not enforced yet`,
    );
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1" } } }));
    const filed = await svc(home, ["webhook", "subscribe", "b", "--route-profile", "work"]);
    expect(filed.stderr).toContain(
      `Note: gateway.multiplex_profiles is off in ${join(home.dir, "config.yaml")}, so the binding`,
    );
  });

  it("updating a hand-written record without a secret, with no global secret either, warns that it answers 404", async () => {
    home = tempHome();
    home.write("webhook_subscriptions.json", JSON.stringify({ h: { prompt: "x" } }), 0o600);
    const alone = await svc(home, ["webhook", "subscribe", "h", "--description", "d"]);
    expect(alone.code).toBe(0);
    expect(alone.stdout).toContain("Secret: none of its own: the global secret");
    expect(alone.stderr).toContain(
      "Warning: the gateway does not serve h (it answers 404): it has no secret of its own and there is no global secret",
    );
    const global = await svc(home, ["webhook", "subscribe", "h", "--description", "e"], {
      env: { WEBHOOK_SECRET: "abc" },
    });
    expect(global).toMatchObject({ code: 0, stderr: "" });
  });

  it("test --payload: a JSON object, or exit 2 naming the mistake before anything is sent", async () => {
    home = tempHome();
    const test = (payload: string) => ["webhook", "test", "gh", "--payload", payload];
    const [array, text, unexpected, lines] = await svcEach(home, [
      test("[1,2]"),
      test('"hello"'),
      test('{"secret": TOPSECRET}'),
      test('{\n  "a": 1,\n}'),
    ]);
    expect(array).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--payload: the gateway accepts a JSON object, got an array"),
    });
    expect(text).toMatchObject({ code: 2, stderr: expect.stringContaining("got a string") });
    expect(unexpected).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("not valid JSON at character 12 (Unexpected token 'T')"),
    });
    // V8 quotes the text around an unexpected token; a pasted payload is not repeated back.
    expect(unexpected.stderr).not.toContain("TOPSECRET");
    expect(lines.stderr).toContain("--payload: not valid JSON at line 3, column 1 (");
  });

  it("--deliver-only with a real target, --mirror-to-session and --secret on a new subscription; the URL carries /p/<profile> when multiplexing", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        gateway: { multiplex_profiles: true },
        platforms: { webhook: { enabled: true, host: "0.0.0.0", port: 9123 } },
      }),
    );
    const res = await svc(home, [
      "webhook",
      "subscribe",
      "alerts",
      "--deliver-only",
      "--deliver",
      "chat_1",
      "--deliver-chat-id",
      "-100",
      "--mirror-to-session",
      "--secret",
      "chosen-by-receiver",
      "--route-profile",
      "work",
      "--events",
      "a, b",
    ]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("URL:    http://127.0.0.1:9123/p/work/webhooks/alerts\n");
    expect(res.stdout).toContain("Secret: chosen-by-receiver\n");
    expect(stored()).toEqual({
      alerts: {
        events: ["a", "b"],
        deliver: "chat_1",
        deliver_extra: { chat_id: "-100" },
        deliver_only: true,
        mirror_to_session: true,
        secret: "chosen-by-receiver",
        profile: "work",
        enabled: true,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    });
    expect(statSync(join(home.dir, "webhook_subscriptions.json")).mode & 0o777).toBe(0o600);
    const list = await svc(home, ["webhook", "list"]);
    expect(list.stdout).toMatch(/^alerts\s+a,b\s+chat_1 \(direct\)\s+work\s+yes/m);
    expect(list.stdout).not.toContain("chosen-by-receiver");
  });

  it("remove, enable and disable of a config.yaml route say it is static and where to change it", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({ platforms: { webhook: { enabled: true, routes: { fixed: { secret: "s" } } } } }),
    );
    const results = await svcEach(
      home,
      ["remove", "enable", "disable"].map((command) => ["webhook", command, "fixed"]),
    );
    for (const res of results) {
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(
        '"fixed" is a static route of config.yaml (platforms.webhook.routes.fixed) — edit that file to change it',
      );
    }
  });

  it("a config.yaml route written under platforms.webhook.extra.routes is named there, where the file has it", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({ platforms: { webhook: { enabled: true, extra: { routes: { fixed: { secret: "s" } } } } } }),
    );
    const removed = await svc(home, ["webhook", "remove", "fixed"]);
    expect(removed.code).toBe(2);
    expect(removed.stderr).toContain(
      '"fixed" is a static route of config.yaml (platforms.webhook.extra.routes.fixed) — edit that file',
    );
    home.write("webhook_subscriptions.json", JSON.stringify({ fixed: { secret: "t" } }));
    const check = await svc(home, ["config", "check"]);
    expect(check.stderr).toContain(
      "has a route of the same name (platforms.webhook.extra.routes.fixed), which wins",
    );
  });

  it("a hand-written record of the wrong type names the file, <name>.<key> and the value; blank option values name the flag", async () => {
    home = tempHome();
    const file = join(home.dir, "webhook_subscriptions.json");
    home.write(
      "webhook_subscriptions.json",
      JSON.stringify({ a: { secret: 5, events: "push" }, b: "str", ok: { secret: "s" } }),
    );
    const [list, change, blankSecret, blankDeliver] = await svcEach(home, [
      ["webhook", "list"],
      ["webhook", "subscribe", "a", "--prompt", "x"],
      ["webhook", "subscribe", "n", "--secret", " "],
      ["webhook", "subscribe", "n", "--deliver", ""],
    ]);
    expect(list.code).toBe(0);
    // A record written as text is as often as not the route's secret: named, never quoted.
    expect(list.stdout).toMatch(
      /^b\s.*invalid\s.* b: expected a mapping, got text \(not shown: it may be the route's secret\)/m,
    );
    expect(list.stdout).not.toContain("str");
    expect(change.code).toBe(1);
    expect(change.stderr).toContain(
      `${file}: a.secret: expected a string, got a number (not shown: the key holds a secret)`,
    );
    expect(change.stderr).toContain(`${file}: a.events: expected a list, got "push"`);
    expect(blankSecret).toMatchObject({
      code: 2,
      // "n" is new: it has no current value to keep, and the refusal says what leaving it out gives.
      stderr: expect.stringContaining(
        "svc: --secret: must not be empty — leave the option out: a new subscription gets a generated secret, an existing one keeps its own",
      ),
    });
    expect(blankDeliver).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        "svc: --deliver: must not be empty — leave the option out (a new subscription delivers to log, an existing one keeps its target), or name a target",
      ),
    });
    expect(Object.keys(stored())).toEqual(["a", "b", "ok"]);
  });

  it("a chat id or deliver_extra value of spaces alone is refused (every delivery would fail); '' removes the key", async () => {
    home = tempHome();
    const chatId = await svc(home, [
      "webhook",
      "subscribe",
      "n",
      "--deliver",
      "log",
      "--deliver-chat-id",
      "  ",
    ]);
    const extra = await svc(home, ["webhook", "subscribe", "n", "--deliver-extra", "to= "]);
    expect(chatId).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        "svc: --deliver-chat-id: only spaces — give the chat id, or --deliver-chat-id ''",
      ),
    });
    expect(extra).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        "svc: --deliver-extra to=: only spaces — give a value, or to= with nothing",
      ),
    });
    const removed = await svc(home, ["webhook", "subscribe", "n", "--deliver-chat-id", ""]);
    expect(removed.code).toBe(0);
    expect(stored().n.deliver_extra).toBeUndefined();
  });

  it("a line break or other control character in a one-line option (a chat id, an event type, an extra's value, a description, a name) is refused, nothing written; one in --prompt is kept", async () => {
    home = tempHome();
    const refused = await svcEach(home, [
      ["webhook", "subscribe", "gh", "--deliver", "telegram", "--deliver-chat-id", "12\n3"],
      ["webhook", "subscribe", "gh", "--events", "push\npull"],
      [
        "webhook",
        "subscribe",
        "gh",
        "--deliver",
        "email",
        "--deliver-extra",
        "subject=Build\r\nBcc: x@example.com",
      ],
      ["webhook", "subscribe", "gh", "--description", "two\tcells"],
      ["webhook", "subscribe", "gh", "--deliver", "telegram\n"],
      ["webhook", "subscribe", "gh", "--cron-job", "nightly\u0007"],
      ["webhook", "subscribe", "gh", "--description", "line one\u2028line two"],
      ["webhook", "subscribe", "gh", "--deliver", "telegram", "--deliver-chat-id", "12\u00853"],
    ]);
    expect(refused.map((r) => r.code)).toEqual([2, 2, 2, 2, 2, 2, 2, 2]);
    const problem = "must not contain a line break, tab or other control character (pasted along with it?)";
    expect(refused[0]?.stderr).toContain(`--deliver-chat-id "12\\n3": ${problem} — give the chat id alone`);
    expect(refused[1]?.stderr).toContain(
      `--events "push\\npull": ${problem} — separate event types with commas (--events push,pull_request)`,
    );
    expect(refused[2]?.stderr).toContain(
      `--deliver-extra subject="Build\\r\\nBcc: x@example.com": ${problem} — give the value on one line`,
    );
    expect(refused[3]?.stderr).toContain(`--description "two\\tcells": ${problem} — write it on one line`);
    expect(refused[4]?.stderr).toContain(`--deliver "telegram\\n": ${problem} — give the name alone`);
    expect(refused[5]?.stderr).toContain(`--cron-job "nightly\\u0007": ${problem} — give the name alone`);
    expect(refused[6]?.stderr).toContain(
      `--description "line one\\u2028line two": ${problem} — write it on one line`,
    );
    expect(refused[7]?.stderr).toContain(
      `--deliver-chat-id "12\\u00853": ${problem} — give the chat id alone`,
    );
    expect(stored.bind(null)).toThrow(); // nothing was written
    const prompt = "New PR:\n{pull_request.title}\n\tby {sender.login}";
    expect((await svc(home, ["webhook", "subscribe", "gh", "--prompt", prompt])).code).toBe(0);
    expect(stored().gh.prompt).toBe(prompt);
  });

  it("--deliver-chat-id with --deliver-extra chat_id= sets one key twice: refused (exit 2), nothing written", async () => {
    home = tempHome();
    const both = await svc(home, [
      "webhook",
      "subscribe",
      "n",
      "--deliver-chat-id",
      "5",
      "--deliver-extra",
      "chat_id=6",
    ]);
    expect(both).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        "svc: --deliver-chat-id and --deliver-extra chat_id= both set deliver_extra.chat_id, which holds one value: keep one",
      ),
    });
    expect(() => stored()).toThrow(/ENOENT/);
  });

  it("--deliver-extra key=value sets what forge_comment needs (repeatable, templates kept, key= removes)", async () => {
    home = tempHome();
    const bare = await svc(home, ["webhook", "subscribe", "pr", "--deliver", "forge_comment"]);
    expect(bare.stderr).toContain("Warning: pr: deliver_extra.repo: required for forge_comment");
    expect(bare.stderr).toContain("svc webhook subscribe pr --deliver-extra <key>=<value>");
    const set = await svc(home, [
      "webhook",
      "subscribe",
      "pr",
      "--deliver-extra",
      "repo={repository.full_name}",
      "--deliver-extra",
      "pr_number={pull_request.number}",
      "--deliver-extra",
      "note=a=b",
      "--events",
      "pull_request",
      "--events",
      "issue_comment,push",
    ]);
    expect(set.code).toBe(0);
    expect(set.stderr).not.toContain("required for forge_comment");
    // Stored all the same: a key the target never reads is only named.
    expect(set.stderr).toContain(
      "Warning: pr: deliver_extra.note: forge_comment does not read it (it reads repo, pr_number)",
    );
    // A repeated --events adds up, like the repeated --deliver-extra.
    expect(stored().pr.events).toEqual(["pull_request", "issue_comment", "push"]);
    expect(stored().pr.deliver_extra).toEqual({
      repo: "{repository.full_name}",
      pr_number: "{pull_request.number}",
      note: "a=b",
    });
    const [removed, bad] = await svcEach(home, [
      ["webhook", "subscribe", "pr", "--deliver-extra", "note="],
      ["webhook", "subscribe", "other", "--deliver-extra", "repo"],
    ]);
    expect(removed.code).toBe(0);
    expect(stored().pr.deliver_extra).toEqual({
      repo: "{repository.full_name}",
      pr_number: "{pull_request.number}",
    });
    expect(bad).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--deliver-extra: expected key=value, got "repo"'),
    });
  });

  it("--no-deliver-only, --no-cron-job, --no-mirror-to-session and --prompt '' switch a subscription back, keeping its secret", async () => {
    home = tempHome();
    await svc(home, ["cron", "create", "--name", "triage", "--schedule", "1h", "--prompt", "p"]);
    await svc(home, [
      "webhook",
      "subscribe",
      "fire",
      "--cron-job",
      "triage",
      "--mirror-to-session",
      "--prompt",
      "PR {number}",
      "--description",
      "d",
    ]);
    await svc(home, ["webhook", "subscribe", "direct", "--deliver-only", "--deliver", "chat_1"]);
    const before = stored();
    // A setting kept from an earlier command is named as such, with the option that lifts it.
    const [toDirect, toCron, toLog] = await svcEach(home, [
      ["webhook", "subscribe", "fire", "--deliver-only", "--deliver", "chat_1"],
      ["webhook", "subscribe", "direct", "--cron-job", "triage"],
      ["webhook", "subscribe", "direct", "--deliver", "log"],
    ]);
    expect(toDirect).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        "fire: --deliver-only cannot be combined with the cron job triage the subscription fires (set earlier) — add --no-cron-job",
      ),
    });
    expect(toCron.stderr).toContain(
      "direct: --cron-job cannot be combined with the subscription's direct delivery (--deliver-only, set earlier) — add --no-deliver-only",
    );
    expect(toLog.stderr).toContain(
      "direct: --deliver log: the subscription delivers directly (--deliver-only, set earlier), which needs a real target — add --no-deliver-only",
    );
    expect(stored()).toEqual(before);
    const [fire, direct] = await svcEach(home, [
      [
        "webhook",
        "subscribe",
        "fire",
        "--no-cron-job",
        "--no-mirror-to-session",
        "--prompt",
        "",
        "--description",
        "",
      ],
      ["webhook", "subscribe", "direct", "--no-deliver-only"],
    ]);
    expect(fire.code).toBe(0);
    expect(direct.code).toBe(0);
    const after = stored();
    expect(before.fire).toMatchObject({ cron_job: "triage", mirror_to_session: true });
    expect(before.fire).toMatchObject({ prompt: "PR {number}", description: "d" });
    // An empty --prompt is the default (the payload as JSON), not an empty prompt for the agent.
    expect(Object.keys(after.fire)).not.toContain("prompt");
    expect(Object.keys(after.fire)).not.toContain("description");
    expect(after.fire.cron_job).toBeUndefined();
    expect(after.fire).toMatchObject({ mirror_to_session: false, secret: before.fire.secret });
    expect(before.direct.deliver_only).toBe(true);
    expect(after.direct).toMatchObject({
      deliver_only: false,
      deliver: "chat_1",
      secret: before.direct.secret,
    });
  });

  it("--cron-job naming a hand-written job that is not valid is refused with the file, key and problem (it is never fired)", async () => {
    home = tempHome();
    const jobs = home.write("cron/jobs.json", JSON.stringify({ revision: 1, jobs: { a1: { id: "a1" } } }));
    const res = await svc(home, ["webhook", "subscribe", "fire", "--cron-job", "a1"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`--cron-job a1: ${jobs}: jobs.a1.name: missing — expected a string`);
    expect(res.stderr).not.toContain("undefined");
  });
});
