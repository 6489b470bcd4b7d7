import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { sign as signGithub } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it, vi } from "vitest";
import { signTestEvent } from "../../../src/cli/webhook/signTest.js";
import { signGenericV2 } from "../../../src/cli/webhook.js";
import { decodePayload, type RequestRecord, readHistory } from "../../../src/io/stores/deliveryHistory.js";
import {
  RECORDER_AGENT,
  readRun,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "./svc.js";

const SECRET = "history-secret";
let gw: TestGateway;
afterEach(() => gw.stop());

async function post(id: string, body: string, signed = true, headers: Record<string, string> = {}) {
  return postJson(gw.url("/webhooks/pr"), body, {
    "X-GitHub-Event": "pull_request",
    "X-GitHub-Delivery": id,
    ...(signed ? { "X-Hub-Signature-256": await signGithub(SECRET, body) } : {}),
    ...headers,
  });
}

/** Route `pr` with a prompt, run by the recorder agent, delivery history on (its default). */
const startHistoryGateway = () =>
  startTestGateway({
    config: webhookConfig(
      { pr: { secret: SECRET, events: ["pull_request"], prompt: "PR {number}: {pull_request.title}" } },
      {},
      { agent: recorderAgent() },
    ),
    files: { "agent/recorder.sh": RECORDER_AGENT },
  });

const requestRecord = (dir: string, id: string) =>
  readHistory(dir).find((r): r is RequestRecord => r.kind === "request" && r.id === id);

describe("svc webhook deliveries and redeliver", { timeout: 120_000 }, () => {
  it("lists recent requests with their run and delivery; redeliver runs the original payload again, marked", async () => {
    gw = await startHistoryGateway();
    const body = '{"number":7,"pull_request":{"title":"Fix é"}}';
    expect((await post("d-1", body)).status).toBe(202);
    await waitForRun(gw, "d-1");
    expect((await post("d-1", body)).body).toMatchObject({ status: "duplicate" });
    expect((await post("d-2", '{"secret-looking":"x"}', false)).status).toBe(401);
    // The run's and the delivery's records follow the run.
    const port = String(gw.gateway.port);
    const listed = await vi.waitFor(
      async () => {
        const res = await svc(gw.home, ["webhook", "deliveries", "--json"]);
        const rows = JSON.parse(res.stdout) as Array<Record<string, unknown>>;
        expect(rows.find((r) => r.id === "d-1" && r.outcome === "accepted")?.delivery).not.toBeNull();
        return rows;
      },
      { timeout: 20_000, interval: 200 },
    );
    expect(listed.map((r) => [r.id, r.status, r.outcome, r.payload_kept])).toEqual([
      ["d-2", 401, "Invalid signature", false],
      ["d-1", 200, "duplicate", true],
      ["d-1", 202, "accepted", true],
    ]);
    expect(listed[2]).toMatchObject({
      route: "pr",
      event: "pull_request",
      run: { outcome: "ok" },
      delivery: { platform: "log", outcome: "ok" },
    });
    const dir = join(gw.home.dir, "deliveries");
    for (const file of readdirSync(dir)) expect(statSync(join(dir, file)).mode & 0o777).toBe(0o600);
    // An unauthenticated sender's body is not kept.
    expect(readFileSync(join(dir, "history.jsonl"), "utf8")).not.toContain("secret-looking");

    const table = await svc(gw.home, ["webhook", "deliveries", "pr", "--limit", "2"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^TIME\s+DELIVERY ID\s+ROUTE\s+EVENT\s+ANSWER\s+RUN\s+DELIVERY\s+NOTE$/m);
    expect(table.stdout).toMatch(/\sd-2\s+pr\s+pull_request\s+401 Invalid signature\s+-\s+-/);
    // A sender's own redelivery (GitHub's Redeliver keeps X-GitHub-Delivery) after a fix runs nothing: said.
    expect(table.stdout).toMatch(
      /\sd-1\s+pr\s+pull_request\s+200 duplicate\s+-\s+-\s+its delivery ID was received before, so it did not run again \(a sender's own redelivery, as GitHub's Redeliver, keeps the ID\) — svc webhook redeliver d-1 runs it again$/m,
    );
    expect(table.stdout.trim().split("\n")).toHaveLength(3);
    // A row with no NOTE (and the 401's, with no run or delivery) ends at its last value, as svc mcp list's rows do.
    expect(table.stdout).not.toMatch(/ $/m);

    const again = await svc(gw.home, ["webhook", "redeliver", "d-1", "--port", port]);
    expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
    const newId = /as (redelivery-[0-9a-f]{8}-d-1)\)/.exec(again.stdout)?.[1] as string;
    expect(newId).toBeDefined();
    const run = await waitForRun(gw, newId);
    expect(run).toMatchObject({ prompt: expect.stringContaining("PR 7: Fix é"), event: "pull_request" });
    expect(readRun(gw.home, "d-1")?.prompt).toBe(run.prompt);
    const after = await svc(gw.home, ["webhook", "deliveries", "--limit", "1"]);
    expect(after.stdout).toContain("redelivery of d-1");

    const missing = await svc(gw.home, ["webhook", "redeliver", "nope", "--port", port]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no delivery "nope"');
    const unkept = await svc(gw.home, ["webhook", "redeliver", "d-2", "--port", port]);
    expect(unkept.code).toBe(2);
    expect(unkept.stderr).toContain("the route did not accept the request");

    // An event the route ignored before it was given an ID, sent without one, is listed as "-": that is
    // no ID, and redelivering "the latest -" would send an event nobody picked.
    const ignoredBody = '{"number":8}';
    const ignored = await postJson(gw.url("/webhooks/pr"), ignoredBody, {
      "X-GitHub-Event": "push",
      "X-Hub-Signature-256": await signGithub(SECRET, ignoredBody),
    });
    expect(ignored.body).toMatchObject({ status: "ignored", event: "push" });
    const placeholder = await svc(gw.home, ["webhook", "redeliver", "-", "--route", "pr", "--port", port]);
    expect(placeholder.code).toBe(2);
    expect(placeholder.stderr).toContain('"-" is not a delivery ID');
  });

  it("keeps a JSON body unescaped in its line (also one labelled as a form, as curl -d sends it) and a form's body as text; all redeliver byte for byte", async () => {
    gw = await startHistoryGateway();
    const dir = join(gw.home.dir, "deliveries");
    const port = String(gw.gateway.port);
    // Spacing, an escaped quote, `1.0` and an id past 2^53: what a parse and stringify would not give back.
    const json = '{ "number":7, "n":1.0, "id":12345678901234567890, "pull_request":{"title":"Fix \\"é\\""} }';
    // A form whose first field looks like JSON: the route reads its `payload` field, not the body.
    const form = `{"x":1}&payload=${encodeURIComponent('{"number":8,"pull_request":{"title":"Form"}}')}`;
    expect((await post("j-1", json)).status).toBe(202);
    const formHeaders = { "content-type": "application/x-www-form-urlencoded" };
    expect((await post("f-1", form, true, formHeaders)).status).toBe(202);
    // JSON labelled as a form, as `curl -d '{...}'` sends it: the route read it as JSON, and so does the line.
    const curled = '{"number":9,"pull_request":{"title":"Curled"}}';
    expect((await post("c-1", curled, true, formHeaders)).status).toBe(202);
    await waitForRun(gw, "j-1");
    await waitForRun(gw, "f-1");
    await waitForRun(gw, "c-1");
    const line = await vi.waitFor(
      () => {
        const found = readFileSync(join(dir, "history.jsonl"), "utf8")
          .split("\n")
          .find((l) => l.includes('"id":"j-1"') && l.includes('"kind":"request"'));
        expect(found).toBeDefined();
        return found as string;
      },
      { timeout: 10_000 },
    );
    expect(line.endsWith(`"payload_encoding":"json","payload":${json}}`)).toBe(true);
    expect(decodePayload(requestRecord(dir, "j-1") as RequestRecord)?.toString()).toBe(json);
    expect(requestRecord(dir, "f-1")).toMatchObject({ payload_encoding: "utf8", payload: form });
    const curledLine = readFileSync(join(dir, "history.jsonl"), "utf8")
      .split("\n")
      .find((l) => l.includes('"id":"c-1"') && l.includes('"kind":"request"'));
    expect(curledLine?.endsWith(`"payload_encoding":"json","payload":${curled}}`)).toBe(true);

    for (const [id, title] of [
      ["j-1", 'PR 7: Fix "é"'],
      ["f-1", "PR 8: Form"],
      ["c-1", "PR 9: Curled"],
    ] as const) {
      const again = await svc(gw.home, ["webhook", "redeliver", id, "--port", port]);
      expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
      const newId = new RegExp(`as (redelivery-[0-9a-f]{8}-${id})\\)`).exec(again.stdout)?.[1] as string;
      expect((await waitForRun(gw, newId)).prompt).toContain(title);
      // The redelivery was signed over the stored bytes and verified: the same bytes as the original.
      const stored = await vi.waitFor(
        () => {
          const record = requestRecord(dir, newId);
          expect(record).toBeDefined();
          return record as RequestRecord;
        },
        { timeout: 10_000 },
      );
      expect(decodePayload(stored)?.toString()).toBe(id === "j-1" ? json : id === "c-1" ? curled : form);
    }
  });

  it("redelivers a non-ASCII event type and delivery id as they came, in the event's own header; a whsec_ route's redelivery keeps the id it prints", async () => {
    const WHSEC = `whsec_${Buffer.from("redeliver-key-0123456789").toString("base64")}`;
    gw = await startTestGateway({
      config: webhookConfig(
        {
          gt: { secret: "s", events: ["déploiement"], prompt: "deploy {n}" },
          sw: { secret: WHSEC, prompt: "sw {n}" },
        },
        {},
        { agent: recorderAgent() },
      ),
      files: { "agent/recorder.sh": RECORDER_AGENT },
    });
    const dir = join(gw.home.dir, "deliveries");
    const port = String(gw.gateway.port);
    const utf8 = (text: string) => Buffer.from(text, "utf8").toString("latin1");
    const body = '{"n":1}';
    const original = await postJson(gw.url("/webhooks/gt"), body, {
      "X-Gitea-Event": utf8("déploiement"),
      "X-Request-ID": utf8("job-中文-1"),
      ...signGenericV2("s", body, Math.floor(Date.now() / 1000)),
    });
    expect(original.body).toMatchObject({ status: "accepted", delivery_id: "job-中文-1" });
    await waitForRun(gw, "job-中文-1");
    await vi.waitFor(
      () =>
        expect(requestRecord(dir, "job-中文-1")).toMatchObject({
          event: "déploiement",
          event_header: "x-gitea-event",
        }),
      { timeout: 10_000 },
    );
    const again = await svc(gw.home, ["webhook", "redeliver", "job-中文-1", "--port", port]);
    expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
    const newId = /as (redelivery-[0-9a-f]{8}-job-中文-1)\)/.exec(again.stdout)?.[1] as string;
    expect(newId).toBeDefined();
    expect((await waitForRun(gw, newId)).prompt).toContain("deploy 1");
    await vi.waitFor(
      () =>
        expect(requestRecord(dir, newId)).toMatchObject({
          status: 202,
          event: "déploiement",
          event_header: "x-gitea-event",
          redelivery_of: "job-中文-1",
        }),
      { timeout: 10_000 },
    );

    const signed = signTestEvent(WHSEC, body, Math.floor(Date.now() / 1000), "msg_original");
    expect((await postJson(gw.url("/webhooks/sw"), body, signed)).status).toBe(202);
    await waitForRun(gw, "msg_original");
    await vi.waitFor(() => expect(requestRecord(dir, "msg_original")).toBeDefined(), { timeout: 10_000 });
    // Answered with event "unknown" (it names none), recorded as naming none.
    expect(requestRecord(dir, "msg_original")).not.toHaveProperty("event");
    const whsec = await svc(gw.home, ["webhook", "redeliver", "msg_original", "--port", port]);
    const printed = /as (redelivery-[0-9a-f]{8}-msg_original)\)/.exec(whsec.stdout)?.[1] as string;
    expect(whsec.stdout).toContain(`"delivery_id":"${printed}"`);
    await waitForRun(gw, printed);

    // An event type the body names (Stripe, Svix senders): recorded as resolved, and not put in a
    // header by the redelivery (the body that names it is sent again).
    const typed = '{"type":"invoice.paid","n":2}';
    const typedHeaders = signTestEvent(WHSEC, typed, Math.floor(Date.now() / 1000), "msg_typed");
    expect((await postJson(gw.url("/webhooks/sw"), typed, typedHeaders)).body).toMatchObject({
      event: "invoice.paid",
    });
    await vi.waitFor(
      () =>
        expect(requestRecord(dir, "msg_typed")).toMatchObject({
          event: "invoice.paid",
          event_header: "body",
        }),
      { timeout: 10_000 },
    );
    const again2 = await svc(gw.home, ["webhook", "redeliver", "msg_typed", "--port", port]);
    const typedId = /as (redelivery-[0-9a-f]{8}-msg_typed)\)/.exec(again2.stdout)?.[1] as string;
    await vi.waitFor(
      () =>
        expect(requestRecord(dir, typedId)).toMatchObject({ event: "invoice.paid", event_header: "body" }),
      { timeout: 10_000 },
    );
    const listed = await svc(gw.home, ["webhook", "deliveries", "sw"]);
    expect(listed.stdout).toMatch(/msg_typed\s+sw\s+invoice\.paid/);
  });

  it("shows a sender's bidi override and zero-width characters in a delivery id or event type escaped, never raw; redeliver takes the id as shown", async () => {
    gw = await startHistoryGateway();
    const utf8 = (text: string) => Buffer.from(text, "utf8").toString("latin1");
    // Shown raw, U+202E would make the rest of the row read right to left ("Trojan Source").
    const id = "dlv-\u202e4321\u2066-\u200bz";
    const body = '{"number":3,"pull_request":{"title":"t"}}';
    expect((await post(utf8(id), body)).status).toBe(202);
    await waitForRun(gw, id);
    const ignored = await post("dlv-other", body, true, { "X-GitHub-Event": utf8("pull\u200f_request") });
    expect(ignored.status).toBe(200);
    const dir = join(gw.home.dir, "deliveries");
    await vi.waitFor(() => expect(requestRecord(dir, "dlv-other")).toBeDefined(), { timeout: 10_000 });
    const listed = await svc(gw.home, ["webhook", "deliveries"]);
    const shown = "dlv-\\u202e4321\\u2066-\\u200bz";
    expect(listed.stdout).toContain(shown);
    expect(listed.stdout).toContain("pull\\u200f_request");
    expect(listed.stdout).not.toMatch(/[\u202e\u2066\u200b\u200f]/);

    // What the user copies from the table finds the record; the output shows the ids the same way.
    const again = await svc(gw.home, ["webhook", "redeliver", shown, "--port", String(gw.gateway.port)]);
    expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
    expect(again.stdout).not.toMatch(/[\u202e\u2066\u200b]/);
    expect(again.stdout).toMatch(/as redelivery-[0-9a-f]{8}-dlv-\\u202e4321\\u2066-\\u200bz\)/);
    await vi.waitFor(
      () =>
        expect(readHistory(dir).find((r) => r.kind === "request" && r.redelivery_of === id)).toMatchObject({
          status: 202,
          id: expect.stringMatching(/^redelivery-[0-9a-f]{8}-dlv-\u202e4321\u2066-\u200bz$/),
        }),
      { timeout: 10_000 },
    );
  });
});
