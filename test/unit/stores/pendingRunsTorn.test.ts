import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readPendingRuns, writePendingRuns } from "../../../src/io/stores/pendingRuns.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

const run = (id: string) => ({
  routeName: "gh",
  profile: "default",
  event: "push",
  deliveryId: id,
  prompt: "SECRET-PAYLOAD-TEXT",
  extra: {},
  receivedAt: 1,
});

/** A webhook-pending-runs.json that is not JSON is said as such, where it breaks: not as a file of another shape. */
describe("a webhook-pending-runs.json that is not valid JSON", () => {
  it("cut short (a torn write): the line and column where it ends, not `not a list of pending agent runs`", () => {
    home = tempHome();
    const path = join(home.dir, "webhook-pending-runs.json");
    writePendingRuns(path, { runs: [run("a"), run("b")], unreadable: [] });
    const whole = readFileSync(path, "utf8");
    home.write("webhook-pending-runs.json", whole.slice(0, 100));
    const lines = whole.slice(0, 100).split("\n");
    expect(() => readPendingRuns(path)).toThrow(
      `${path}: not valid JSON at line ${lines.length}, column ${(lines.at(-1)?.length ?? 0) + 1} (it ends there, as a write cut short leaves it)`,
    );
  });

  it("a character that breaks it: its line and column, without the text around it (payload text)", () => {
    home = tempHome();
    const path = home.write("webhook-pending-runs.json", '{"version": 1,\n "runs": [SECRET-PAYLOAD-TEXT]}');
    let message = "";
    try {
      readPendingRuns(path);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe(`${path}: not valid JSON at line 2, column 11`);
  });
});
