import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const stored = () => JSON.parse(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8"));

describe("svc webhook subscribe on a hand-written record (spec 2.6)", { timeout: 60_000 }, () => {
  it("writes the properties no option changed as the file has them, not with their defaults filled in", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()));
    const coalesce = { key: "pull_request.number" };
    const filters = { field: "action", in: ["opened"] };
    home.write(
      "webhook_subscriptions.json",
      JSON.stringify({ prs: { secret: "handwritten-secret-qwerty", prompt: "PR {n}", coalesce, filters } }),
      0o600,
    );
    const res = await svc(home, ["webhook", "subscribe", "prs", "--description", "pull requests"]);
    expect(res.code).toBe(0);
    // Before, the rewrite pinned the defaults (window_seconds 30, max_wait_seconds 300) into the record
    // and turned the single filter mapping into a list: the file no longer said what its author wrote.
    expect(stored().prs).toMatchObject({ coalesce, filters, description: "pull requests" });
    expect(stored().prs.coalesce).toEqual(coalesce);
    // A property an option changes is written as the option says.
    expect((await svc(home, ["webhook", "subscribe", "prs", "--prompt", "New {n}"])).code).toBe(0);
    expect(stored().prs).toMatchObject({ prompt: "New {n}", coalesce, filters });
  });
});
