import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { findRunSession } from "../../../src/io/sessions/runJournal.js";
import type { AcceptedEvent } from "../../../src/streams/context.js";
import {
  inHome,
  RECORDER_AGENT,
  readRun,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson, request } from "../../helpers/http.js";

const OPEN = "INSECURE_NO_AUTH";

function replyLines(gw: TestGateway, route: string): string[] {
  return gw
    .logs()
    .filter((l) => l.msg.startsWith(`[webhook] ${route} reply:`))
    .map((l) => l.msg);
}

/** A fake Telegram Bot API on loopback: records sendMessage calls; answers `ok: false` for chat "refuse". */
async function fakeTelegram(): Promise<{
  server: Server;
  url: string;
  calls: Array<{ path: string; json: Record<string, unknown> }>;
}> {
  const calls: Array<{ path: string; json: Record<string, unknown> }> = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    const json = JSON.parse(text || "{}") as Record<string, unknown>;
    calls.push({ path: req.url ?? "", json });
    res.setHeader("content-type", "application/json");
    if (json.chat_id === "refuse") {
      res.statusCode = 400;
      res.end(JSON.stringify({ ok: false, description: "Bad Request: chat not found" }));
    } else {
      res.end(JSON.stringify({ ok: true, result: { message_id: calls.length } }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

describe("agent dispatch (202 now, run in the background)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "skills/second/SKILL.md": "Always answer in haiku.\n",
        "skills/third/SKILL.md": "never loaded\n",
        // Saved as "UTF-8 with BOM" (Windows editors).
        "skills/marked/SKILL.md": "\ufeffReply in Français.\n",
        "skills/github/review/SKILL.md": "Review the diff.\n",
        // A SKILL.md that is there but cannot be read (a directory: EISDIR, as EACCES for another user's file).
        "skills/broken/SKILL.md/keep": "",
        // A shared skill tree kept elsewhere, its category linked into skills/ (the test links it).
        "shared-skills/ops/deploy/SKILL.md": "Check the rollout.\n",
        "webhook_subscriptions.json": JSON.stringify({
          subtools: { secret: OPEN, toolsets: ["terminal", "no_such_sub_toolset"] },
        }),
      },
      config: webhookConfig(
        {
          run: { secret: OPEN, prompt: "PR {number}", events: ["pull_request"] },
          skilled: { secret: OPEN, prompt: "go", skills: ["first", "second", "third"] },
          categorized: { secret: OPEN, prompt: "go", skills: ["review"] },
          marked: { secret: OPEN, prompt: "go", skills: ["marked"] },
          unreadable: { secret: OPEN, prompt: "go", skills: ["broken", "second"] },
          wide: { secret: OPEN, prompt: "go", skills: ["wide", "second"] },
          linked: { secret: OPEN, prompt: "go", skills: ["deploy", "second"] },
          tools: { secret: OPEN, toolsets: ["terminal", "no_such_toolset"] },
        },
        { rate_limit: 1000 },
        { agent: recorderAgent() },
      ),
    });
  });
  afterAll(() => gw.stop());

  it("the command runner gets the prompt on stdin and SVC_ROUTE / SVC_EVENT / SVC_DELIVERY_ID; the reply goes to the log target", async () => {
    const res = await postJson(
      gw.url("/webhooks/run"),
      { number: 7 },
      { "X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "abc-1" },
    );
    expect(res).toMatchObject({
      status: 202,
      body: { status: "accepted", route: "run", event: "pull_request", delivery_id: "abc-1" },
    });
    const run = await waitForRun(gw, "abc-1");
    expect(run).toMatchObject({
      prompt: "PR 7",
      route: "run",
      event: "pull_request",
      delivery_id: "abc-1",
      secret_in_env: false,
    });
    await vi.waitFor(
      () => expect(replyLines(gw, "run").some((m) => m.endsWith("reply to abc-1"))).toBe(true),
      { timeout: 10_000 },
    );
  });

  it("skills: the first listed skill that exists is loaded (prepended under a header); later ones are ignored", async () => {
    const res = await postJson(gw.url("/webhooks/skilled"), {}, { "X-Request-ID": "sk-1" });
    const run = await waitForRun(gw, res.body.delivery_id as string);
    expect(run.prompt).toBe("# Skill: second\n\nAlways answer in haiku.\n\n# Event\n\ngo");
    expect(run.prompt).not.toContain("never loaded");
  });

  it("skills: a SKILL.md saved with a UTF-8 byte order mark is loaded without it", async () => {
    const res = await postJson(gw.url("/webhooks/marked"), {}, { "X-Request-ID": "sk-bom-1" });
    const run = await waitForRun(gw, res.body.delivery_id as string);
    expect(run.prompt).toBe("# Skill: marked\n\nReply in Français.\n\n# Event\n\ngo");
  });

  it("skills: a skill one category level down (skills/<category>/<name>/SKILL.md) is found; a listed skill not installed is logged once", async () => {
    const res = await postJson(gw.url("/webhooks/categorized"), {});
    const run = await waitForRun(gw, res.body.delivery_id as string);
    expect(run.prompt).toBe("# Skill: review\n\nReview the diff.\n\n# Event\n\ngo");
    for (let i = 0; i < 2; i++) {
      const again = await postJson(gw.url("/webhooks/skilled"), {});
      await waitForRun(gw, again.body.delivery_id as string);
    }
    const warnings = gw.logs().filter((l) => l.msg.startsWith('[webhook] skilled: skill "first" not found'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toContain('loaded "second" instead');
  });

  it("skills: a category directory that is a symlink (a shared skill tree linked into skills/) is searched too", async () => {
    symlinkSync(join(gw.home.dir, "shared-skills", "ops"), join(gw.home.dir, "skills", "ops"));
    const res = await postJson(gw.url("/webhooks/linked"), {});
    const run = await waitForRun(gw, res.body.delivery_id as string);
    expect(run.prompt).toBe("# Skill: deploy\n\nCheck the rollout.\n\n# Event\n\ngo");
    expect(gw.logs().filter((l) => l.msg.startsWith('[webhook] linked: skill "deploy"'))).toEqual([]);
  });

  it("skills: a SKILL.md that is there but cannot be read is logged as unreadable, naming the file, not as not found", async () => {
    const res = await postJson(gw.url("/webhooks/unreadable"), {});
    const run = await waitForRun(gw, res.body.delivery_id as string);
    expect(run.prompt).toBe("# Skill: second\n\nAlways answer in haiku.\n\n# Event\n\ngo");
    const warnings = gw.logs().filter((l) => l.msg.startsWith('[webhook] unreadable: skill "broken"'));
    expect(warnings.map((l) => l.msg)).toEqual([
      `[webhook] unreadable: skill "broken" not loaded: ${join(gw.home.dir, "skills", "broken", "SKILL.md")} cannot be read (EISDIR) — check that it is a file the gateway's user may read; loaded "second" instead`,
    ]);
  });

  it("skills: a SKILL.md saved as UTF-16 is not loaded as garbled text: logged with the fix, the next listed skill is tried", async () => {
    // What PowerShell 5's `>` writes: a byte order mark, then two bytes a character.
    const file = join(gw.home.dir, "skills", "wide", "SKILL.md");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(
      file,
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("Answer in French.\n", "utf16le")]),
    );
    const res = await postJson(gw.url("/webhooks/wide"), {});
    const run = await waitForRun(gw, res.body.delivery_id as string);
    expect(run.prompt).toBe("# Skill: second\n\nAlways answer in haiku.\n\n# Event\n\ngo");
    const warnings = gw.logs().filter((l) => l.msg.startsWith('[webhook] wide: skill "wide"'));
    expect(warnings.map((l) => l.msg)).toEqual([
      `[webhook] wide: skill "wide" not loaded: ${file}: saved as UTF-16 — save it as UTF-8 (in PowerShell: Set-Content -Encoding utf8, or Out-File -Encoding utf8); loaded "second" instead`,
    ]);
  });

  it("unknown toolset names are dropped with one log line per route and name: the start's, not again at any run", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await postJson(gw.url("/webhooks/tools"), {});
      await waitForRun(gw, res.body.delivery_id as string);
    }
    // Said once in the whole log: at start (key path and likely spelling), not again at the first run.
    const lines = gw.logs().filter((l) => l.msg.includes('"no_such_toolset"'));
    expect(lines.map((l) => l.msg)).toEqual([
      expect.stringMatching(
        /routes\.tools\.toolsets: unknown toolset "no_such_toolset"; runs of the route drop it/,
      ),
    ]);
    // A subscription's: said when the gateway reads it, not again at its runs.
    for (let i = 0; i < 2; i++) {
      const res = await postJson(gw.url("/webhooks/subtools"), {});
      expect(res.status).toBe(202);
      await waitForRun(gw, res.body.delivery_id as string);
    }
    expect(
      gw
        .logs()
        .filter((l) => l.msg.includes('"no_such_sub_toolset"'))
        .map((l) => l.msg),
    ).toEqual([
      expect.stringMatching(
        /^\[webhook\] dynamic subscription subtools: toolsets: unknown toolset "no_such_sub_toolset"/,
      ),
    ]);
  });
});

describe("run queue bounds and failures", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      files: {
        "agent/slow.sh": [
          "set -e",
          'dir="$(dirname "$0")/../q"; mkdir -p "$dir/active" "$dir/counts" "$dir/done"',
          'cat >/dev/null; touch "$dir/active/$SVC_DELIVERY_ID"',
          'ls "$dir/active" | wc -l > "$dir/counts/$SVC_DELIVERY_ID"',
          "sleep 0.3",
          'rm "$dir/active/$SVC_DELIVERY_ID"; touch "$dir/done/$SVC_DELIVERY_ID"',
          'if [ "$SVC_ROUTE" = "boom" ]; then echo "agent exploded" >&2; exit 9; fi',
          'if [ "$SVC_ROUTE" = "skip" ]; then printf SKIP; fi',
        ].join("\n"),
      },
      config: webhookConfig(
        { q: { secret: OPEN }, boom: { secret: OPEN }, skip: { secret: OPEN } },
        { rate_limit: 1000 },
        {
          agent: {
            provider: "command",
            command: ["bash", inHome("agent/slow.sh")],
            max_concurrent_runs: 2,
          },
        },
      ),
    });
  });
  afterAll(() => gw.stop());

  it("at most agent.max_concurrent_runs run at once, and a burst loses nothing", async () => {
    const { readdirSync, readFileSync } = await import("node:fs");
    const ids: string[] = [];
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        postJson(gw.url("/webhooks/q"), { i }, { "X-Request-ID": `q-${i}` }),
      ),
    );
    for (const a of answers) {
      expect(a.status).toBe(202);
      ids.push(a.body.delivery_id as string);
    }
    const dir = join(gw.home.dir, "q");
    await vi.waitFor(() => expect(readdirSync(join(dir, "done")).sort()).toEqual([...ids].sort()), {
      timeout: 10_000,
      interval: 50,
    });
    const counts = ids.map((id) => Number(readFileSync(join(dir, "counts", id), "utf8").trim()));
    expect(Math.max(...counts)).toBeLessThanOrEqual(2);
    expect(Math.max(...counts)).toBe(2);
  });

  it("a failing run is logged and the server keeps serving", async () => {
    const res = await postJson(gw.url("/webhooks/boom"), {});
    expect(res.status).toBe(202);
    await vi.waitFor(
      () => expect(gw.logs().some((l) => l.msg === "[webhook] boom: agent run failed")).toBe(true),
      { timeout: 10_000 },
    );
    const failed = gw.logs().find((l) => l.msg === "[webhook] boom: agent run failed");
    expect(String(failed?.err)).toContain("exited with code 9");
    // The failed run has its line in the run journal too: the prompt, no reply, and why it failed.
    const session = await vi.waitFor(
      () => {
        const found = findRunSession(join(gw.home.dir, "sessions"), `webhook:boom:${res.body.delivery_id}`);
        if (found === undefined) throw new Error("no run journal line yet");
        return found;
      },
      { timeout: 10_000 },
    );
    expect(session.entries.map((e) => e.role)).toEqual(["user"]);
    expect(session.error).toBe("agent command exited with code 9: agent exploded");
    expect(await request(gw.url("/health"))).toMatchObject({ status: 200 });
    expect(await postJson(gw.url("/webhooks/q"), {})).toMatchObject({ status: 202 });
  });

  it("empty agent output and SKIP are still delivered (spec 4.4)", async () => {
    await postJson(gw.url("/webhooks/q"), {}, { "X-Request-ID": "empty-1" });
    await postJson(gw.url("/webhooks/skip"), {}, { "X-Request-ID": "skip-1" });
    await vi.waitFor(
      () => {
        expect(gw.logs().some((l) => l.msg === "[webhook] q reply:\n" && l.delivery_id === "empty-1")).toBe(
          true,
        );
        expect(gw.logs().some((l) => l.msg === "[webhook] skip reply:\nSKIP")).toBe(true);
      },
      { timeout: 10_000 },
    );
  });
});

describe("direct delivery (deliver_only)", () => {
  let gw: TestGateway;
  let telegram: Awaited<ReturnType<typeof fakeTelegram>>;
  beforeAll(async () => {
    telegram = await fakeTelegram();
    gw = await startTestGateway({
      config: webhookConfig(
        {
          notify: {
            secret: OPEN,
            deliver: "telegram",
            deliver_only: true,
            prompt: "Deploy {service} finished: {status}",
            deliver_extra: { chat_id: "{chat}" },
          },
        },
        { rate_limit: 1000 },
        { platforms: { telegram: { enabled: true, token: "123:abc", base_url: telegram.url } } },
      ),
    });
  });
  afterAll(async () => {
    await gw.stop();
    telegram.server.close();
  });

  it("success: 200 {status: delivered, route, target, delivery_id}; the rendered prompt is the message and deliver_extra is rendered", async () => {
    const res = await postJson(
      gw.url("/webhooks/notify"),
      { service: "api", status: "ok", chat: "4242" },
      { "X-Request-ID": "dd-1" },
    );
    expect(res).toMatchObject({
      status: 200,
      body: { status: "delivered", route: "notify", target: "telegram", delivery_id: "dd-1" },
    });
    expect(telegram.calls.at(-1)?.json).toMatchObject({ chat_id: 4242, text: "Deploy api finished: ok" });
  });

  it("a refused delivery is 502 Delivery failed, details only in the log; the sender's retry is processed again", async () => {
    const body = { service: "api", status: "bad", chat: "refuse" };
    const res = await postJson(gw.url("/webhooks/notify"), body, { "X-Request-ID": "dd-2" });
    expect(res).toEqual(expect.objectContaining({ status: 502, body: { error: "Delivery failed" } }));
    expect(JSON.stringify(gw.logs())).toContain("chat not found");
    expect(JSON.stringify(gw.logs())).not.toContain("123:abc");
    const retry = await postJson(gw.url("/webhooks/notify"), body, { "X-Request-ID": "dd-2" });
    expect(retry.status).toBe(502);
    const ok = await postJson(gw.url("/webhooks/notify"), { ...body, chat: "1" }, { "X-Request-ID": "dd-2" });
    expect(ok).toMatchObject({ status: 200, body: { status: "delivered" } });
    expect(await postJson(gw.url("/webhooks/notify"), body, { "X-Request-ID": "dd-2" })).toMatchObject({
      status: 200,
      body: { status: "duplicate" },
    });
  });
});

describe("cron_job and coalesce hooks (EventModes)", () => {
  it("a cron_job route calls fireCronJob with the job ref and the rendered event, and answers 202 naming the job", async () => {
    const fired: Array<[string, AcceptedEvent]> = [];
    const coalesced: AcceptedEvent[] = [];
    const gw = await startTestGateway({
      eventModes: {
        fireCronJob: (ref, event) => {
          fired.push([ref, event]);
          return "fired";
        },
        coalesce: (event) => {
          coalesced.push(event);
          return event.payload.key === undefined ? "not_grouped" : "coalesced";
        },
      },
      config: webhookConfig({
        nightly: { secret: OPEN, cron_job: "nightly-report", prompt: "event {id}" },
        grouped: { secret: OPEN, coalesce: { key: "key" } },
      }),
    });
    try {
      const res = await postJson(
        gw.url("/webhooks/nightly"),
        { id: 5 },
        { "X-Forge-Event": "push", "X-Forge-Delivery": "c-1" },
      );
      expect(res.status).toBe(202);
      // Spec 2.7's accepted shape exactly: no extra key (the job is in the log, not the answer).
      expect(res.body).toEqual({ status: "accepted", route: "nightly", event: "push", delivery_id: "c-1" });
      expect(fired).toHaveLength(1);
      expect(fired[0]?.[0]).toBe("nightly-report");
      expect(fired[0]?.[1]).toMatchObject({
        routeName: "nightly",
        event: "push",
        deliveryId: "c-1",
        prompt: "event 5",
        payload: { id: 5 },
      });
      expect(await postJson(gw.url("/webhooks/grouped"), { key: "pr-1" })).toMatchObject({
        status: 202,
        body: { status: "coalesced" },
      });
      const direct = await postJson(gw.url("/webhooks/grouped"), {});
      expect(direct).toMatchObject({ status: 202, body: { status: "accepted", route: "grouped" } });
      expect(coalesced).toHaveLength(2);
      await vi.waitFor(() => expect(replyLines(gw, "grouped")).toHaveLength(1), { timeout: 10_000 });
    } finally {
      await gw.stop();
    }
  });
});

describe("a request that fails after its delivery id was recorded", () => {
  it("is answered 500 and its id forgotten: the sender's retry is processed, not answered duplicate", async () => {
    let calls = 0;
    const gw = await startTestGateway({
      eventModes: {
        coalesce: () => {
          calls += 1;
          if (calls === 1) throw new Error("group store bug (first call only)");
          return "coalesced";
        },
      },
      config: webhookConfig({ grouped: { secret: OPEN, coalesce: { key: "key" } } }),
    });
    try {
      const headers = { "X-GitHub-Delivery": "failed-once-7f3e" };
      expect(await postJson(gw.url("/webhooks/grouped"), { key: "pr-9" }, headers)).toMatchObject({
        status: 500,
        body: { error: "Internal error" },
      });
      expect(gw.logs().some((l) => l.msg === "[webhook] internal error in the dispatch stage")).toBe(true);
      expect(await postJson(gw.url("/webhooks/grouped"), { key: "pr-9" }, headers)).toMatchObject({
        status: 202,
        body: { status: "coalesced" },
      });
      // Recorded once it was taken: the next retry is the duplicate.
      expect(await postJson(gw.url("/webhooks/grouped"), { key: "pr-9" }, headers)).toMatchObject({
        status: 200,
        body: { status: "duplicate" },
      });
      expect(calls).toBe(2);
    } finally {
      await gw.stop();
    }
  });
});

describe("stop()", () => {
  it("waits for runs in flight before it resolves", async () => {
    const gw = await startTestGateway({
      files: { "agent/recorder.sh": `sleep 0.4\n${RECORDER_AGENT}` },
      config: webhookConfig({ r: { secret: OPEN } }, {}, { agent: recorderAgent() }),
    });
    const res = await postJson(gw.url("/webhooks/r"), {}, { "X-Request-ID": "late-1" });
    expect(res.status).toBe(202);
    await gw.gateway.stop();
    expect(readRun(gw.home, "late-1")).toMatchObject({ delivery_id: "late-1" });
    await gw.stop();
  });
});
