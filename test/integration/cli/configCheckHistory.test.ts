import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

const config = (history: boolean) =>
  stringify({
    platforms: {
      webhook: {
        enabled: true,
        host: "127.0.0.1",
        delivery_history: history,
        routes: { pr: { secret: "ops-history-check-secret" } },
      },
    },
  });

describe("svc config check and a delivery history the gateway cannot open", () => {
  it("reports a file in the history directory's place as the problem the gateway refuses to start with (exit 1)", async () => {
    home = tempHome();
    home.write("config.yaml", config(true), 0o600);
    home.write("deliveries", "not a directory\n");
    const res = await svc(home, ["config", "check"]);
    expect(res.code).toBe(1);
    expect(res.stdout).toContain("1 problem: the gateway would not start");
    expect(res.stderr).toContain(
      `${home.dir}/deliveries: the delivery history cannot be opened (${home.dir}/deliveries is not a directory) — make it a directory this user can write (move away what is in its place), or set platforms.webhook.delivery_history: false`,
    );
  });

  it("reports a directory in history.jsonl's place; with delivery_history: false neither is a problem", async () => {
    home = tempHome();
    home.write("config.yaml", config(true), 0o600);
    mkdirSync(join(home.dir, "deliveries", "history.jsonl"), { recursive: true });
    const res = await svc(home, ["config", "check"]);
    expect(res.code).toBe(1);
    // The way out is to move that directory away, not to make one: the start says the same.
    const said = `${home.dir}/deliveries: the delivery history cannot be opened (${home.dir}/deliveries/history.jsonl is not a file) — move away what is in the place of history.jsonl (the gateway writes its history file there), or set platforms.webhook.delivery_history: false`;
    expect(res.stderr).toContain(said);
    const start = await svc(home, ["gateway", "run", "--port", "0"], { timeoutMs: 20_000 });
    expect(start.code).toBe(1);
    expect(start.stderr).toContain(said);
    home.write("config.yaml", config(false), 0o600);
    const off = await svc(home, ["config", "check"]);
    expect(off.code).toBe(0);
    expect(off.stdout).toMatch(/^ok: /);
  });
});
