import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { historyHooks } from "../../../src/gateway/deliveryHistoryHooks.js";
import { REFUSED_RECORDS_BURST } from "../../../src/gateway/refusedRecordAllowance.js";
import { createHistoryWriter, readHistory } from "../../../src/io/stores/deliveryHistory.js";
import type { Outcome } from "../../../src/streams/types.js";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { fakeClock } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

const T0 = Date.parse("2026-12-05T02:00:00Z");
const head = (id: string) => ({
  method: "POST",
  path: "/webhooks/pr",
  headers: { "content-type": "application/json", "x-github-event": "pull_request", "x-github-delivery": id },
});
const IGNORED: Outcome = { status: 200, body: { status: "ignored", reason: "filter" } };
const ACCEPTED = (id: string): Outcome => ({
  status: 202,
  body: { status: "accepted", route: "pr", event: "pull_request", delivery_id: id },
});
const body = (action: string) => Buffer.from(`{"action":"${action}","number":7}`);
const nextTurn = () => new Promise((done) => setImmediate(done));

/** The gateway's hooks on a real history writer in a private directory, on a clock the test moves. */
function historyOnDisk() {
  home = tempHome();
  const dir = join(home.dir, "deliveries");
  const clock = { ms: T0 };
  const errors: unknown[] = [];
  const hooks = historyHooks(
    createHistoryWriter(
      dir,
      (err) => errors.push(err),
      () => clock.ms,
    ),
    () => clock.ms,
  );
  const rows = () => readHistory(dir, clock.ms).map((r) => `${r.kind} ${r.id} ${r.at}`);
  return { hooks, clock, rows, errors };
}

describe("delivery history: the requests of a turn are recorded at its end", () => {
  it("in the order answered, each at the time it was answered, and before a run recorded later in the turn", async () => {
    const { hooks, clock, rows } = historyOnDisk();
    hooks.request("pr", head("d-1"), body("opened"), ACCEPTED("d-1"));
    clock.ms += 7;
    hooks.request("pr", head("d-2"), body("closed"), IGNORED, "filter action did not match");
    clock.ms += 5;
    hooks.run({ deliveryId: "d-1", routeName: "pr", event: "pull_request", receivedAt: T0 }, undefined);
    hooks.delivery({ deliveryId: "d-1", route: "pr" }, "log", true);
    expect(rows()).toEqual([]);
    await nextTurn();
    expect(rows()).toEqual([
      "request d-1 2026-12-05T02:00:00.000Z",
      "request d-2 2026-12-05T02:00:00.007Z",
      "run d-1 2026-12-05T02:00:00.012Z",
      "delivery d-1 2026-12-05T02:00:00.012Z",
    ]);
    const [accepted, ignored, ran] = readHistory(join(home.dir, "deliveries"), clock.ms);
    // The run keeps when its request was received: the request's own record may leave the history first.
    expect(ran).toMatchObject({ kind: "run", at: "2026-12-05T02:00:00.012Z", received_at: T0 });
    expect(accepted).toMatchObject({
      status: 202,
      outcome: "accepted",
      payload: '{"action":"opened","number":7}',
    });
    expect(ignored).toMatchObject({ status: 200, outcome: "ignored", reason: "filter action did not match" });
  });

  it("flush() and close() write the turn's requests at once; a request after close is not recorded, and said once", () => {
    const { hooks, rows, errors } = historyOnDisk();
    hooks.request("pr", head("d-1"), body("closed"), IGNORED);
    hooks.flush();
    expect(rows()).toEqual(["request d-1 2026-12-05T02:00:00.000Z"]);
    hooks.request("pr", head("d-2"), body("closed"), IGNORED);
    hooks.close();
    expect(rows()).toEqual(["request d-1 2026-12-05T02:00:00.000Z", "request d-2 2026-12-05T02:00:00.000Z"]);
    hooks.request("pr", head("d-3"), body("closed"), IGNORED);
    hooks.request("pr", head("d-4"), body("closed"), IGNORED);
    expect(rows()).toHaveLength(2);
    expect(errors.map(String)).toEqual(["Error: write after close"]);
  });

  it("refused requests past the route's allowance are counted as they come, and their summary is written between the requests around it", async () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    const clock = fakeClock(T0);
    const hooks = historyHooks(
      createHistoryWriter(
        dir,
        (err) => {
          throw err;
        },
        clock.now,
      ),
      clock.now,
      undefined,
      clock,
    );
    const unsigned: Outcome = { status: 401, body: { error: "Invalid signature" } };
    for (let i = 0; i < REFUSED_RECORDS_BURST + 5; i++)
      hooks.request("pr", head(`bad-${i}`), undefined, unsigned, "x-hub-signature-256 does not match");
    hooks.request("pr", head("d-1"), body("closed"), IGNORED);
    await nextTurn();
    const records = readHistory(dir, clock.now());
    expect(records.map((r) => r.kind)).toEqual([
      ...Array<string>(REFUSED_RECORDS_BURST).fill("request"),
      "not_recorded",
      "request",
    ]);
    expect(records[REFUSED_RECORDS_BURST]).toMatchObject({ kind: "not_recorded", count: 5 });
    expect(records.at(-1)).toMatchObject({ id: "d-1", status: 200 });
    hooks.close();
  });

  it("a process that exits in the turn it answered a request still has its record", async () => {
    home = tempHome();
    const dir = join(home.dir, "deliveries");
    const module = (path: string) => JSON.stringify(pathToFileURL(svcModule(path)).href);
    const script = `
      import { historyHooks } from ${module("gateway/deliveryHistoryHooks.js")};
      import { createHistoryWriter } from ${module("io/stores/deliveryHistory.js")};
      const hooks = historyHooks(createHistoryWriter(${JSON.stringify(dir)}, (err) => { throw err; }), Date.now);
      const head = { method: "POST", path: "/webhooks/pr", headers: { "x-github-delivery": "d-exit" } };
      hooks.request("pr", head, Buffer.from("{}"), { status: 200, body: { status: "ignored" } });
      process.exit(0);
    `;
    await execa(process.execPath, [...CLI_NODE_ARGS, "--input-type=module", "-e", script]);
    expect(readHistory(dir).map((r) => `${r.kind} ${r.id}`)).toEqual(["request d-exit"]);
  });
});
