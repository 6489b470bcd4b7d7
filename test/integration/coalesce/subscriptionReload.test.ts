import { renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { signGenericV2 } from "../../../src/cli/webhook.js";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/** Spec 4.3 item 1: the subscription file is re-read on a request when its metadata changed; no restart. */

const perTest = gatewayPerTest();
const live = perTest.live;
const file = () => join(live().home.dir, "webhook_subscriptions.json");
const records = (secret: string) => JSON.stringify({ dyn: { secret, prompt: "p {n}" } });
const post = (secret: string) => {
  const body = JSON.stringify({ n: 1 });
  return postJson(
    live().url("/webhooks/dyn"),
    body,
    signGenericV2(secret, body, Math.floor(Date.now() / 1000)),
  );
};

describe("dynamic subscription reload (spec 4.3 item 1)", () => {
  it("a same-size rewrite that keeps inode, size and mtime (a coarse timestamp tick) is still picked up", async () => {
    await perTest.start({ config: webhookConfig({}, { rate_limit: 1000 }) });
    // A whole-second mtime just behind the clock: what a filesystem with coarse timestamps records.
    const tick = new Date(Math.floor(Date.now() / 1000) * 1000);
    writeFileSync(file(), records("secret-aaaa"));
    utimesSync(file(), tick, tick);
    expect((await post("secret-aaaa")).status).toBe(202);

    writeFileSync(file(), records("secret-bbbb")); // same inode, same size
    utimesSync(file(), tick, tick); // same mtime: the metadata alone cannot tell
    expect((await post("secret-aaaa")).status).toBe(401);
    expect((await post("secret-bbbb")).status).toBe(202);
  });

  it("an atomic replace (rename) is seen at once; a removed file removes every subscription; recreating it serves them again", async () => {
    await perTest.start({ config: webhookConfig({}, { rate_limit: 1000 }) });
    writeFileSync(file(), records("one"));
    expect((await post("one")).status).toBe(202);
    writeFileSync(`${file()}.tmp`, records("two"));
    renameSync(`${file()}.tmp`, file());
    expect((await post("two")).status).toBe(202);
    rmSync(file());
    expect(await post("two")).toMatchObject({ status: 404, body: { error: "Unknown route" } });
    writeFileSync(file(), records("three"));
    expect((await post("three")).status).toBe(202);
  });
});
