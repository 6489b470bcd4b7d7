import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

const OPEN = "INSECURE_NO_AUTH";
const IGNORED = { status: 200, body: { status: "ignored", reason: "script" } };
const withScript = (script: string, prompt = "{title}|{script_output}") => ({ secret: OPEN, script, prompt });

describe("route scripts (spec 2.4), real bash and python3", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    process.env.SVC_TEST_PARENT_SECRET = "parent-only";
    gw = await startTestGateway({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "scripts/replace.sh":
          // biome-ignore lint/suspicious/noTemplateCurlyInString: bash parameter expansion
          'payload="$(cat)"\necho "{\\"title\\": \\"replaced\\", \\"len\\": ${#payload}}"\n',
        "scripts/text.py": "import sys, json\nd = json.load(sys.stdin)\nprint('python saw', d['title'])\n",
        "scripts/nested/ok.bash": 'cat >/dev/null\necho \'{"title": "from nested"}\'\n',
        "scripts/empty.sh": "cat >/dev/null\n",
        "scripts/silent.sh": "cat >/dev/null\necho '[SILENT]'\n",
        "scripts/ignore.py": "import sys\nsys.stdin.read()\nprint('{\"__svc_ignore__\": true}')\n",
        "scripts/fail.sh": 'cat >/dev/null\necho \'{"title": "never"}\'\nexit 3\n',
        "scripts/env.py":
          "import os, json, sys\nsys.stdin.read()\nprint(json.dumps({'title': ','.join(sorted(os.environ))}))\n",
        "scripts/whoami.sh":
          // biome-ignore lint/suspicious/noTemplateCurlyInString: bash parameter expansion
          'cat >/dev/null\nprintf \'{"title": "%s %s %s"}\' "$SVC_ROUTE" "$SVC_EVENT" "${SVC_DELIVERY_ID-unset}"\n',
        "scripts/numbers.py":
          "import sys, json\nd = json.load(sys.stdin)\nprint(json.dumps({'title': repr(d['amount']) + ' ' + repr(d['big'])})[:-1] + ', \"price\": 2.50}')\n",
        // Python's json.dumps writes a float that is not finite as NaN / Infinity (allow_nan is on by default).
        "scripts/ratio.py":
          "import sys, json\nd = json.load(sys.stdin)\nprint(json.dumps({'title': d['title'], 'ratio': float('nan'), 'range': [float('-inf'), 1.5], 'note': 'NaN stays text'}))\n",
        "scripts/github/pr.py":
          "import json, sys\nsys.stdin.read()\nprint(json.dumps({'title': open('template.txt').read().strip()}))\n",
        "scripts/github/template.txt": "read beside the script\n",
        "scripts/crash.py":
          "import json, sys\nd = json.load(sys.stdin)\nprint('starting', file=sys.stderr)\nprint(d['no_such_key'])\n",
        "scripts/quiet_fail.sh": "cat >/dev/null\necho 'no repo in payload' >&2\n",
        // stderr whose last 500 characters start right after the first half of an emoji.
        "scripts/emoji_fail.sh": `cat >/dev/null\nprintf '%s' '😀${"x".repeat(499)}' >&2\nexit 1\n`,
        // A JSON object nested 600 deep: more than a payload may nest (512, as a request body).
        "scripts/deep.py":
          "import sys\nsys.stdin.read()\nprint('{\"title\": ' + '[' * 600 + ']' * 600 + '}')\n",
        "evil.sh": 'echo \'{"title": "escaped"}\'\n',
      },
      config: webhookConfig(
        {
          replace: withScript("replace.sh"),
          text: withScript("text.py"),
          nested: withScript("nested/ok.bash"),
          absolute: withScript("/bin/true"),
          empty: withScript("empty.sh"),
          silent: withScript("silent.sh"),
          ignore: withScript("ignore.py"),
          fail: withScript("fail.sh"),
          missing: withScript("nope.sh"),
          traversal: withScript("../evil.sh"),
          symlink: withScript("link.sh"),
          env: withScript("env.py"),
          numbers: withScript("numbers.py", "{title}|{price}"),
          ratio: withScript("ratio.py", "{title}|{ratio}|{range}|{note}|{script_output}"),
          whoami: withScript("whoami.sh"),
          crash: withScript("crash.py"),
          sibling: withScript("github/pr.py"),
          quiet_fail: withScript("quiet_fail.sh"),
          emoji_fail: withScript("emoji_fail.sh"),
          deep: withScript("deep.py"),
        },
        // Long enough for python3 to start on a loaded machine (the timeout has its own gateway below).
        { script_timeout_seconds: 8, rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
    symlinkSync(join(gw.home.dir, "evil.sh"), join(gw.home.dir, "scripts", "link.sh"));
  });
  afterAll(async () => {
    delete process.env.SVC_TEST_PARENT_SECRET;
    await gw.stop();
  });

  const post = (route: string, body: unknown, headers: Record<string, string> = {}) =>
    postJson(gw.url(`/webhooks/${route}`), body, headers);
  const promptOf = async (deliveryId: string) => (await waitForRun(gw, deliveryId)).prompt;

  it("a JSON-object output replaces the payload used by the prompt (bash, payload JSON on stdin)", async () => {
    const res = await post("replace", { title: "original" });
    expect(res).toMatchObject({ status: 202, body: { status: "accepted" } });
    expect(await promptOf(res.body.delivery_id as string)).toBe("replaced|{script_output}");
  });

  it("other text output is added to the payload as script_output (python3 for non-shell extensions)", async () => {
    const res = await post("text", { title: "T1" });
    expect(res.status).toBe(202);
    expect(await promptOf(res.body.delivery_id as string)).toBe("T1|python saw T1");
  });

  it("relative paths resolve under the profile's scripts/ directory; .bash runs under bash", async () => {
    const res = await post("nested", { title: "x" });
    expect(await promptOf(res.body.delivery_id as string)).toBe("from nested|{script_output}");
  });

  it("a script runs in its own directory: scripts/github/pr.py opens github/template.txt as template.txt", async () => {
    const res = await post("sibling", { title: "t" });
    expect(res.status).toBe(202);
    expect(await promptOf(res.body.delivery_id as string)).toBe("read beside the script|{script_output}");
  });

  it.each([
    ["empty", "empty output"],
    ["silent", "exactly [SILENT]"],
    ["ignore", '{"__svc_ignore__": true}'],
    ["fail", "a nonzero exit, even with JSON output"],
    ["missing", "a missing script"],
  ])("%s: %s → 200 ignored/script", async (route) => {
    expect(await post(route, { title: "t" })).toMatchObject(IGNORED);
  });

  it("a script that leaves scripts/ (traversal, absolute path, symlink) is never run: ignored/script", async () => {
    expect(await post("traversal", { title: "t" })).toMatchObject(IGNORED);
    expect(await post("absolute", { title: "t" })).toMatchObject(IGNORED);
    expect(await post("symlink", { title: "t" })).toMatchObject(IGNORED);
  });

  it("the script sees a minimal environment: none of the gateway's variables", async () => {
    const res = await post("env", { title: "t" });
    const names = (await promptOf(res.body.delivery_id as string)).split("|")[0]?.split(",") ?? [];
    expect(names).toContain("PATH");
    expect(names).not.toContain("SVC_TEST_PARENT_SECRET");
    expect(names).not.toContain("SVC_HOME");
  });

  it("the script is told the route, the resolved event type (from a header: not in the payload) and the sender's delivery id", async () => {
    const named = await post("whoami", '{"title": "t"}', {
      "X-GitHub-Event": "push",
      "X-GitHub-Delivery": "gh-77",
    });
    expect(await promptOf(named.body.delivery_id as string)).toBe("whoami push gh-77|{script_output}");
    const anonymous = await post("whoami", { title: "t" });
    expect(await promptOf(anonymous.body.delivery_id as string)).toBe("whoami  unset|{script_output}");
  });

  it("the script reads the numbers the sender wrote (1.0 stays a float, no precision lost), and its own output's numbers reach the prompt as written", async () => {
    const res = await post("numbers", '{"amount": 1.0, "big": 12345678901234567890}');
    expect(res.status).toBe(202);
    expect(await promptOf(res.body.delivery_id as string)).toBe("1.0 12345678901234567890|2.50");
  });

  it("a JSON object Python's json.dumps wrote with NaN or Infinity in it replaces the payload, those values as null", async () => {
    // It was taken for text: the prompt kept the sender's payload with the object as script_output.
    const res = await post("ratio", { title: "from python" });
    expect(res.status).toBe(202);
    expect(await promptOf(res.body.delivery_id as string)).toBe(
      "from python|null|[null,1.5]|NaN stays text|{script_output}",
    );
  });

  it("a failing script's last stderr lines (a Python traceback's exception) are in the log line of the ignored event", async () => {
    expect(await post("crash", { title: "t" })).toMatchObject(IGNORED);
    expect(await post("quiet_fail", { title: "t" })).toMatchObject(IGNORED);
    await vi.waitFor(
      () => {
        const lines = gw.logs().map((l) => l.msg);
        expect(
          lines.find((m) => m.includes("crash: script ignored the event (exited with code 1; stderr: ")),
        ).toMatch(/KeyError: 'no_such_key'\)$/);
        expect(lines).toContain(
          "[webhook] quiet_fail: script ignored the event (empty output; stderr: no repo in payload)",
        );
      },
      { timeout: 10_000 },
    );
  });

  it("a stderr tail cut at 500 characters right after the first half of an emoji leaves the emoji out whole", async () => {
    expect(await post("emoji_fail", { title: "t" })).toMatchObject(IGNORED);
    await vi.waitFor(
      () =>
        expect(gw.logs().map((l) => l.msg)).toContain(
          `[webhook] emoji_fail: script ignored the event (exited with code 1; stderr: …${"x".repeat(499)})`,
        ),
      { timeout: 10_000 },
    );
  });

  it("a JSON object nested deeper than a payload may be is ignored (logged why), never taken as script_output text", async () => {
    expect(await post("deep", { title: "t" })).toMatchObject(IGNORED);
    await vi.waitFor(
      () =>
        expect(gw.logs().map((l) => l.msg)).toContain(
          "[webhook] deep: script ignored the event (standard output is a JSON object nested deeper than 512 levels (the most a payload may nest))",
        ),
      { timeout: 10_000 },
    );
  });

  it("ignored events are logged with the reason", () => {
    const lines = gw.logs().map((l) => l.msg);
    expect(
      lines.some((m) =>
        m.includes("traversal: script ignored the event (path leaves the scripts directory)"),
      ),
    ).toBe(true);
  });
});

describe("a route script past script_timeout_seconds", () => {
  // Its own gateway with a 1 s timeout: the script (bash, no interpreter start to wait for) sleeps far past it.
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      files: { "agent/recorder.sh": RECORDER_AGENT, "scripts/slow.sh": "exec sleep 60\n" },
      config: webhookConfig(
        { slow: withScript("slow.sh") },
        { script_timeout_seconds: 1, rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
  });
  afterAll(() => gw.stop());

  it("slow: a timeout (script_timeout_seconds) → 200 ignored/script, logged with the reason", async () => {
    expect(await postJson(gw.url("/webhooks/slow"), { title: "t" })).toMatchObject(IGNORED);
    await vi.waitFor(
      () =>
        expect(
          gw
            .logs()
            .some((l) =>
              l.msg.includes(
                "slow: script ignored the event (timed out: it ran longer than script_timeout_seconds (1 s))",
              ),
            ),
        ).toBe(true),
      { timeout: 10_000 },
    );
  });
});
