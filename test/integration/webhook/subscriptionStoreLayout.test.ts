import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { svc } from "../cli/svc.js";

/**
 * webhook_subscriptions.json is keyed by route name; the one other layout svc ever wrote is
 * `{"revision": N, "subscriptions": {...}}`. A file with a format `version` (or that wrapper with keys
 * beside it) is another version's layout: read as route names, its `subscriptions` key became a route
 * served with the global secret and the real records were dropped as "fields". It is refused as a whole
 * instead, as an unreadable store is: nothing served from it, nothing in it overwritten.
 */

const GLOBAL = "global-secret";
const signed = (body: string) => ({
  "content-type": "application/json",
  "x-hub-signature-256": `sha256=${createHmac("sha256", GLOBAL).update(body).digest("hex")}`,
});

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const NEWER = JSON.stringify({ version: 2, subscriptions: { ci: { secret: "s", enabled: true } } });
const WRAPPED = JSON.stringify({ revision: 3, subscriptions: { ci: { secret: "s" } }, format: 2 });

describe("a subscription store in a layout this version does not write", { timeout: 60_000 }, () => {
  it.each([
    ["a format version field (a newer svc's)", NEWER, "format version 2"],
    ["the earlier {revision, subscriptions} wrapper with other keys beside it", WRAPPED, '"format"'],
  ])(
    "%s: serves no route made of its keys, says why, and the commands leave it as it is",
    async (_, text, named) => {
      gw = await startTestGateway({
        config: webhookConfig({}, { secret: GLOBAL }),
        files: { "webhook_subscriptions.json": text },
      });
      const body = "{}";
      for (const name of ["subscriptions", "version", "revision", "format", "ci"]) {
        const res = await fetch(gw.url(`/webhooks/${name}`), { method: "POST", headers: signed(body), body });
        expect(res.status, name).toBe(404);
        expect(await res.json()).toEqual({ error: "Unknown route" });
      }
      const logged = gw
        .logs()
        .find((line) => line.msg.includes("webhook_subscriptions.json") && line.level >= 50);
      expect(logged?.msg).toContain(named);

      const file = join(gw.home.dir, "webhook_subscriptions.json");
      const list = await svc(gw.home, ["webhook", "list"]);
      expect(list.code).toBe(1);
      expect(list.stderr).toContain(`${file}: `);
      expect(list.stderr).toContain(named);
      const subscribe = await svc(gw.home, ["webhook", "subscribe", "other"]);
      expect(subscribe.code).toBe(1);
      expect(readFileSync(file, "utf8")).toBe(text);
      const check = await svc(gw.home, ["config", "check"]);
      expect(check.code).toBe(1);
      expect(check.stderr).toContain(named);
    },
  );

  it("a record that holds records (the subscriptions wrapped by hand under one name) is not served, and says where they go", async () => {
    const wrapped = JSON.stringify({
      subscriptions: { ci: { secret: "s" }, cd: { events: ["push"] } },
      ok: {},
    });
    gw = await startTestGateway({
      config: webhookConfig({}, { secret: GLOBAL }),
      files: { "webhook_subscriptions.json": wrapped },
    });
    const body = "{}";
    for (const name of ["subscriptions", "ci", "cd"]) {
      const res = await fetch(gw.url(`/webhooks/${name}`), { method: "POST", headers: signed(body), body });
      expect(res.status, name).toBe(404);
    }
    const ok = await fetch(gw.url("/webhooks/ok"), { method: "POST", headers: signed(body), body });
    expect(ok.status).toBe(202);
    const file = join(gw.home.dir, "webhook_subscriptions.json");
    const advice = `${file}: subscriptions: holds records ("ci", "cd"), not route properties — write each of them at the top level of the file, keyed by its route name ({"ci": {...}, "cd": {...}})`;
    expect(
      gw.logs().find((line) => line.msg.includes("dynamic subscription subscriptions ignored"))?.msg,
    ).toContain(advice);
    const list = await svc(gw.home, ["webhook", "list"]);
    expect(list.stdout.split("\n").find((line) => line.startsWith("subscriptions "))).toContain("invalid");
  });

  it("the earlier {revision, subscriptions} layout alone is still read", async () => {
    gw = await startTestGateway({
      config: webhookConfig({}, { secret: GLOBAL }),
      files: { "webhook_subscriptions.json": JSON.stringify({ revision: 3, subscriptions: { ci: {} } }) },
    });
    const body = "{}";
    const res = await fetch(gw.url("/webhooks/ci"), { method: "POST", headers: signed(body), body });
    expect(res.status).toBe(202);
    const wrapper = await fetch(gw.url("/webhooks/subscriptions"), {
      method: "POST",
      headers: signed(body),
      body,
    });
    expect(wrapper.status).toBe(404);
  });
});
