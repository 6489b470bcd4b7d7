import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A named profile's run journal (`profiles/<name>/sessions/webhook-runs/<day>.jsonl`) is opened at its first
 * run. Once a reload leaves nothing bound to the profile, the file is closed: the gateway, which runs for days,
 * does not hold a descriptor (and, once the profile's directory is removed, the disk space of a deleted file)
 * for every profile it ever ran. A later run of the profile opens it again.
 */
const OPEN = "INSECURE_NO_AUTH";

function config(bound: boolean) {
  return webhookConfig(
    {
      ci: { secret: OPEN, deliver: "log" },
      ...(bound ? { team: { secret: OPEN, profile: "work", deliver: "log" } } : {}),
    },
    {},
    { gateway: { multiplex_profiles: true }, agent: { provider: "echo" } },
  );
}

/** This process's descriptors open on files under the profile's directory. */
const heldUnder = (dir: string) =>
  readdirSync("/proc/self/fd")
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return "";
      }
    })
    .filter((target) => target.startsWith(dir));

const gw = gatewayPerTest();

describe("a named profile's run journal", () => {
  it("is closed once a reload leaves nothing bound to the profile, and opened again by its next run", async () => {
    const g = await gw.start({ config: config(true), files: { "profiles/work/.env": "A=1\n" } });
    const work = join(g.home.dir, "profiles", "work");
    const journal = join(work, "sessions", "webhook-runs");
    const lines = () =>
      readdirSync(journal).flatMap((day) =>
        readFileSync(join(journal, day), "utf8").split("\n").filter(Boolean),
      );
    expect((await postJson(g.url("/p/work/webhooks/team"), { n: 1 }, { "X-Request-ID": "w1" })).status).toBe(
      202,
    );
    await vi.waitFor(() => expect(lines()).toHaveLength(1), { timeout: 10_000 });
    expect(heldUnder(work)).toHaveLength(1);

    g.home.write("config.yaml", stringify(config(false)), 0o600);
    g.gateway.reload();
    expect(heldUnder(work)).toEqual([]);

    g.home.write("config.yaml", stringify(config(true)), 0o600);
    g.gateway.reload();
    expect((await postJson(g.url("/p/work/webhooks/team"), { n: 2 }, { "X-Request-ID": "w2" })).status).toBe(
      202,
    );
    await vi.waitFor(() => expect(lines()).toHaveLength(2), { timeout: 10_000 });
    expect(lines().map((line) => JSON.parse(line).key)).toEqual(["webhook:team:w1", "webhook:team:w2"]);
  });
});
