import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { afterEach, expect, it } from "vitest";
import { SessionStore } from "../../../src/io/sessions/store.js";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const STORE = pathToFileURL(svcModule("io/sessions/store.js")).href;

let home: TempHome;
afterEach(() => home?.cleanup());

/**
 * A writer process (the gateway, `svc cron run`) that, once `go` exists, adds a chat session of its own and
 * appends `count` entries to the shared chat's session, all asked for at once.
 */
function writer(sessions: string, tag: string, count: number) {
  const script = `
    import { existsSync } from "node:fs";
    import { setTimeout as sleep } from "node:timers/promises";
    import { SessionStore } from ${JSON.stringify(STORE)};
    const store = new SessionStore(${JSON.stringify(sessions)});
    process.stdout.write("ready\\n");
    while (!existsSync(${JSON.stringify(join(sessions, "go"))})) await sleep(2);
    const own = store.openChat("telegram", "${tag}");
    const appends = Array.from({ length: ${count} }, (_, i) =>
      store.append("telegram:-1", [{ role: "assistant", content: "${tag}" + i }]),
    );
    const done = await Promise.all([own, ...appends]);
    if (done.slice(1).some((appended) => appended !== true)) throw new Error("an append wrote nothing");`;
  return execa(process.execPath, [...CLI_NODE_ARGS, "--input-type=module", "-e", script], {
    cwd: resolve(import.meta.dirname, "../../.."),
  });
}

// docs/delivery-targets.md: every change to a session holds sessions/index.json.lock, so several processes can
// write. Two processes appending to one session at once each keep their own order, lose no entry, and neither
// one's rewrite of index.json drops the other's change (nor a front end's field).
it("appends from two processes to one session lose nothing and keep each process's order", async () => {
  home = tempHome();
  home.write(
    "sessions/index.json",
    JSON.stringify({
      version: 1,
      front_end: { cursor: 7 },
      sessions: { "telegram:-1": { key: "telegram:-1", file: "telegram/-1.jsonl" } },
    }),
  );
  home.write("sessions/telegram/-1.jsonl", "");
  const sessions = join(home.dir, "sessions");
  const writers = [writer(sessions, "a", 25), writer(sessions, "b", 25)];
  // Both started (their modules loaded) before either writes: the appends meet.
  await Promise.all(writers.map((w) => new Promise((ready) => w.stdout?.once("data", ready))));
  writeFileSync(join(sessions, "go"), "");
  await Promise.all(writers);
  const store = new SessionStore(sessions);
  const contents = store.entries("telegram:-1").map((entry) => entry.content);
  expect(contents).toHaveLength(50);
  for (const tag of ["a", "b"])
    expect(contents.filter((content) => content.startsWith(tag))).toEqual(
      Array.from({ length: 25 }, (_, i) => `${tag}${i}`),
    );
  // Each line whole, and the entries' times in file order (stamped under the lock).
  const ats = store.entries("telegram:-1").map((entry) => entry.at);
  expect([...ats].sort()).toEqual(ats);
  expect(store.get("telegram:a")?.file).toBe("telegram/a.jsonl");
  expect(store.get("telegram:b")?.file).toBe("telegram/b.jsonl");
  expect(store.get("telegram:-1")?.updated_at).toBe(ats.at(-1));
  expect(JSON.parse(readFileSync(store.indexPath, "utf8")).front_end).toEqual({ cursor: 7 });
  expect(existsSync(`${store.indexPath}.lock`)).toBe(false);
}, 60_000);
