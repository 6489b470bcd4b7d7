import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

/** Starts the stale writer; resolves once it has read the store, with a function that lets it write. */
function staleWriter(name: string) {
  const go = join(home.dir, "go");
  const child = spawn(
    process.execPath,
    [
      ...CLI_NODE_ARGS,
      join(import.meta.dirname, "fixtures/staleWriter.mjs"),
      join(home.dir, "webhook_subscriptions.json"),
      name,
      go,
      svcModule("io/stores/subscriptions.js"),
    ],
    {
      env: { PATH: process.env.PATH ?? "", SVC_HOME: home.dir },
    },
  );
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const done = new Promise<{ code: number | null; out: string }>((resolve) =>
    child.on("close", (code) => resolve({ code, out })),
  );
  const ready = new Promise<void>((resolve) =>
    child.stdout.on("data", () => out.includes("read revision") && resolve()),
  );
  return { ready, release: () => writeFileSync(go, ""), done };
}

const subscriptions = () => JSON.parse(readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8"));

describe("subscription store: serialized updates, stale writers refused (spec 3.2), two real processes", {
  timeout: 90_000,
}, () => {
  it("a writer that read before `svc webhook remove` cannot bring the route back", async () => {
    home = tempHome();
    expect((await svc(home, ["webhook", "subscribe", "gh"])).code).toBe(0);
    const writer = staleWriter("gh");
    await writer.ready;
    expect((await svc(home, ["webhook", "remove", "gh"])).code).toBe(0);
    writer.release();
    const result = await writer.done;
    expect(result.code).toBe(1);
    expect(result.out).toContain("the subscription store changed since it was read — run the command again");
    expect(subscriptions()).toEqual({});
  });

  it("a writer that read before `svc webhook disable` cannot re-enable it", async () => {
    home = tempHome();
    await svc(home, ["webhook", "subscribe", "gh"]);
    const writer = staleWriter("gh");
    await writer.ready;
    await svc(home, ["webhook", "disable", "gh"]);
    writer.release();
    expect((await writer.done).out).toContain("the subscription store changed since it was read");
    expect(subscriptions().gh.enabled).toBe(false);
  });

  it("without a concurrent change the same writer succeeds (the check is not a blanket refusal)", async () => {
    home = tempHome();
    await svc(home, ["webhook", "subscribe", "gh"]);
    await svc(home, ["webhook", "disable", "gh"]);
    const writer = staleWriter("gh");
    await writer.ready;
    writer.release();
    expect(await writer.done).toMatchObject({ code: 0, out: expect.stringContaining("written") });
    expect(subscriptions().gh.enabled).toBe(true);
  });

  it("two CLI processes subscribing at once: the file stays valid and holds every write that reported success", async () => {
    home = tempHome();
    const [a, b] = await Promise.all([
      svc(home, ["webhook", "subscribe", "one"]),
      svc(home, ["webhook", "subscribe", "two"]),
    ]);
    const stored = Object.keys(subscriptions()).sort();
    const succeeded = [a.code === 0 ? "one" : undefined, b.code === 0 ? "two" : undefined].filter(
      (n) => n !== undefined,
    );
    expect(stored).toEqual(succeeded.sort());
    for (const r of [a, b]) if (r.code !== 0) expect(r.stderr).toContain("run the command again");
  });
});
