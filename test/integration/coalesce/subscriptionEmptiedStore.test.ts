import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { signGenericV2 } from "../../../src/cli/webhook.js";
import { emptyInPlace } from "../../helpers/emptyInPlace.js";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "../cli/svc.js";

/**
 * webhook_subscriptions.json and cron/jobs.json emptied in place while the gateway serves them (`jq … file >
 * file` empties the file before jq reads it): said by the gateway, `svc config check` and the next writer.
 */

const perTest = gatewayPerTest();
const live = perTest.live;

async function post(route: string, secret: string) {
  const body = JSON.stringify({ a: 1 });
  return postJson(
    live().url(`/webhooks/${route}`),
    body,
    signGenericV2(secret, body, Math.floor(Date.now() / 1000)),
  );
}

describe("a store file emptied in place", { timeout: 60_000 }, () => {
  it("served subscriptions going with it are said (WARN, once); config check names the file; subscribe over it notes it", async () => {
    await perTest.start({ config: webhookConfig({}, { rate_limit: 1000 }) });
    const home = live().home;
    const file = join(home.dir, "webhook_subscriptions.json");
    for (const name of ["one", "two"])
      expect((await svc(home, ["webhook", "subscribe", name, "--prompt", "p"])).code).toBe(0);
    const secret = JSON.parse(readFileSync(file, "utf8")).one.secret as string;
    expect((await post("one", secret)).status).toBe(202);

    emptyInPlace(file);
    expect((await post("one", secret)).status).toBe(404);
    expect((await post("two", secret)).status).toBe(404);
    const said = live()
      .logs()
      .filter((line) => line.msg.includes("is empty"));
    expect(said).toEqual([
      expect.objectContaining({
        level: 40,
        msg: `[webhook] ${file} is empty: its 2 dynamic subscription(s) are no longer served (404) — restore it from a backup or create them again with svc webhook subscribe (a command that writes to the file it reads, as jq … file > file, empties it first)`,
      }),
    ]);

    const check = await svc(home, ["config", "check"]);
    expect(check.code).toBe(0);
    expect(check.stderr).toContain(
      `Warning: ${file} is empty, emptied after svc last wrote it (as jq … file > file leaves it): it holds no dynamic subscriptions — restore it from a backup, or create them again with svc webhook subscribe\n`,
    );

    const sub = await svc(home, ["webhook", "subscribe", "three", "--prompt", "p"]);
    expect(sub.code).toBe(0);
    expect(sub.stderr).toBe(
      `Note: ${file} was empty, emptied after svc last wrote it (as jq … file > file leaves it): the subscriptions it held before are not in it — only what this command wrote is; put them back from a backup\n`,
    );
    expect(Object.keys(JSON.parse(readFileSync(file, "utf8")))).toEqual(["three"]);
  });

  it("cron/jobs.json: config check names it, cron create over it notes it; a file made empty stays quiet", async () => {
    await perTest.start({ config: webhookConfig({}, { rate_limit: 1000 }) });
    const home = live().home;
    const file = join(home.dir, "cron", "jobs.json");
    const create = (name: string) =>
      svc(home, ["cron", "create", "--name", name, "--schedule", "every 1h", "--prompt", "p"]);
    expect((await create("nightly")).code).toBe(0);

    emptyInPlace(file);
    const check = await svc(home, ["config", "check"]);
    expect(check.stderr).toContain(
      `Warning: ${file} is empty, emptied after svc last wrote it (as jq … file > file leaves it): it holds no cron jobs — restore it from a backup, or create them again with svc cron create\n`,
    );
    const again = await create("hourly");
    expect(again.code).toBe(0);
    expect(again.stderr).toBe(
      `Note: ${file} was empty, emptied after svc last wrote it (as jq … file > file leaves it): the cron jobs it held before are not in it — only what this command wrote is; put them back from a backup\n`,
    );

    // Made empty (`touch`, a new file): a store without jobs yet, as an absent one.
    rmSync(file);
    home.write("cron/jobs.json", "");
    expect((await svc(home, ["config", "check"])).stderr).not.toContain("is empty");
    expect((await create("weekly")).stderr).toBe("");
  });
});
