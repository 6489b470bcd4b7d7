import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { homeProblem } from "../../../src/io/homeWritable.js";
import { noDirectoryAt } from "../../../src/io/noDirectoryAt.js";
import { writeJsonAtomic } from "../../../src/io/stores/atomicFile.js";
import { cronStore } from "../../../src/io/stores/cronStore.js";
import { historyText, readText } from "../../../src/io/stores/historyText.js";
import { subscriptionStore } from "../../../src/io/stores/subscriptions.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => {
  vi.unstubAllEnvs();
  home.cleanup();
});

/** Every message of a store at SVC_HOME's top, read, written, and its directory made, with SVC_HOME `at`. */
async function storeMessages(at: string): Promise<string[]> {
  const subscriptions = subscriptionStore(join(at, "webhook_subscriptions.json"));
  const said: string[] = [];
  const failed = (run: () => unknown) => {
    try {
      run();
    } catch (err) {
      said.push((err as Error).message);
    }
  };
  failed(() => subscriptions.read());
  failed(() => writeJsonAtomic(join(at, "gateway.json"), {}));
  await subscriptions.update(() => undefined).catch((err: Error) => said.push(err.message));
  await cronStore(join(at, "cron", "jobs.json"))
    .update(() => undefined)
    .catch((err: Error) => said.push(err.message));
  return said;
}

/**
 * Seen: `SVC_HOME=/dev/null svc webhook list` said "… /dev/null is a device, not a directory: remove it (svc makes
 * the directory)", and `SVC_HOME=/etc/passwd` "SVC_HOME is not a directory — move that file away" twice (SVC_HOME's
 * problem and the store's): neither is svc's to remove or move. The store's directory there is SVC_HOME itself.
 */
describe("an SVC_HOME that is no directory, where the top-level stores' directory goes", () => {
  it("a device is never to be removed: SVC_HOME is what to set, said by SVC_HOME's problem alone", async () => {
    home = tempHome();
    vi.stubEnv("SVC_HOME", "/dev/null");
    expect(noDirectoryAt("/dev/null")).toEqual({
      said: "/dev/null is a device, not a directory",
      fix: "set SVC_HOME to a directory",
      home: true,
    });
    expect(homeProblem("/dev/null")).toBe(
      "/dev/null: SVC_HOME is a device, not a directory — set SVC_HOME to a directory",
    );
    const said = await storeMessages("/dev/null");
    expect(said).toHaveLength(4);
    for (const message of said) expect(message).not.toMatch(/remove|move|svc makes the directory/);
  });

  it("a file is never to be moved, nor one on the way to SVC_HOME", async () => {
    home = tempHome();
    const file = home.write("passwd", "root:x:0:0:root:/root:/bin/sh\n");
    vi.stubEnv("SVC_HOME", file);
    expect(homeProblem(file)).toBe(
      `${file}: SVC_HOME is a file, not a directory — set SVC_HOME to a directory`,
    );
    const said = await storeMessages(file);
    expect(said).toHaveLength(4);
    for (const message of said) expect(message).not.toMatch(/move|svc makes the directory/);
    const below = join(file, "x");
    vi.stubEnv("SVC_HOME", below);
    expect(homeProblem(below)).toBe(
      `${below}: SVC_HOME cannot be made: ${file}, on the way to it, is a file, not a directory — set SVC_HOME to another one`,
    );
    expect(noDirectoryAt(file)).toMatchObject({ fix: "set SVC_HOME to a directory", home: true });
    const belowSaid = await storeMessages(below);
    expect(belowSaid).toHaveLength(4);
    for (const message of belowSaid) expect(message).not.toMatch(/move|svc makes the directory/);
  });

  // Seen: `SVC_HOME=/etc/passwd svc webhook deliveries` (and /dev/null, /etc/passwd/x; redeliver alike) still ended
  // its bracket "— move away what is in its place: the gateway writes its history there".
  it("the delivery history's reader names no file to move either: the error alone", () => {
    home = tempHome();
    const file = home.write("passwd", "root:x:0:0:root:/root:/bin/sh\n");
    for (const at of [file, "/dev/null", join(file, "x")]) {
      vi.stubEnv("SVC_HOME", at);
      const deliveries = join(at, "deliveries");
      const path = join(deliveries, "history.1.jsonl");
      const read = () => historyText(deliveries, "history.1.jsonl", readText);
      expect(read).toThrow(`${path}: the delivery history cannot be read (ENOTDIR`);
      expect(read).not.toThrow(/move|—/);
    }
    // A file in place of deliveries/ in SVC_HOME is still to be moved away.
    vi.stubEnv("SVC_HOME", home.dir);
    const deliveries = home.write("deliveries", "");
    expect(() => historyText(deliveries, "history.1.jsonl", readText)).toThrow(
      /move away what is in its place/,
    );
  });

  // A link to nothing as SVC_HOME was said by the store too, "create that directory, or remove the link": SVC_HOME's
  // problem says it once, and whether the link is this user's to change.
  it("a link to nothing as SVC_HOME is left to SVC_HOME's problem", () => {
    home = tempHome();
    const link = join(home.dir, "link");
    symlinkSync(join(home.dir, "gone"), link);
    vi.stubEnv("SVC_HOME", link);
    expect(noDirectoryAt(link)).toMatchObject({ fix: "set SVC_HOME to a directory", home: true });
  });

  it("a file in place of a directory of svc's own in SVC_HOME is still to be moved away", () => {
    home = tempHome();
    vi.stubEnv("SVC_HOME", home.dir);
    const cron = home.write("cron", "");
    expect(noDirectoryAt(cron)).toEqual({
      said: `${cron} is a file, not a directory`,
      fix: "move that file away",
    });
  });
});
