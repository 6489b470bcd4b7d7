import { afterEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { historyLine } from "../../../src/io/stores/deliveryHistory.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { CLI_NODE_ARGS, MAIN, runNode } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

/** A heap the command fits in with the history it keeps (through tsx too); the old read ran out of it. */
const HEAP_MB = 24;
const MIB = 12;

/**
 * `svc webhook deliveries <route>` for a route with few records read the history newest first keeping every
 * record of every route until it had found `--limit` rows of that route: with a route whose records are
 * old or absent, the whole history (up to 2 × 16 MiB) was held parsed in memory, ~170 MB peak on a full
 * one. Read as a filter, only that route's records are kept: it runs within a small heap.
 */
it("lists a route with few records without holding the other routes' records", {
  timeout: 30_000,
}, async () => {
  home = tempHome();
  home.write(
    "config.yaml",
    stringify(webhookConfig({ busy: { secret: "s" }, rare: { secret: "t" } })),
    0o600,
  );
  const start = Date.now() - 3600_000;
  const lines: string[] = [];
  let bytes = 0;
  const add = (line: string) => {
    lines.push(line);
    bytes += line.length + 1;
  };
  add(
    historyLine({
      kind: "request",
      id: "rare-1",
      at: new Date(start).toISOString(),
      route: "rare",
      status: 202,
      outcome: "accepted",
    }),
  );
  for (let n = 0; bytes < MIB * 2 ** 20; n++) {
    const at = new Date(start + n).toISOString();
    const id = `busy-${n}`;
    add(
      historyLine({
        kind: "request",
        id,
        at,
        route: "busy",
        status: 202,
        outcome: "accepted",
        event: "push",
        payload: `{"n":${n}}`,
        payload_encoding: "json",
      }),
    );
    add(historyLine({ kind: "run", id, at, route: "busy", outcome: "ok" }));
  }
  home.write("deliveries/history.jsonl", `${lines.join("\n")}\n`, 0o600);
  const res = await runNode(home, [
    `--max-old-space-size=${HEAP_MB}`,
    ...CLI_NODE_ARGS,
    MAIN,
    "webhook",
    "deliveries",
    "rare",
  ]);
  expect(res.stderr).toBe("");
  expect(res).toMatchObject({ code: 0 });
  expect(res.stdout).toMatch(/rare-1 +rare +- +202 accepted/);
});
