import { describe, expect, it } from "vitest";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * Route names that Object.prototype also carries are ordinary names: the registry answers only the
 * routes the file (or the subscription store) defines.
 */

const gateways = gatewayPerTest();
const open = { secret: "INSECURE_NO_AUTH" };

describe("route names Object.prototype carries", () => {
  it("constructor and toString routes accept (202); hasOwnProperty, not defined, is Unknown route", async () => {
    const gw = await gateways.start({ config: webhookConfig({ constructor: open, toString: open }) });
    for (const name of ["constructor", "toString"])
      expect([name, (await postJson(gw.url(`/webhooks/${name}`), { a: 1 })).status]).toEqual([name, 202]);
    expect(await postJson(gw.url("/webhooks/hasOwnProperty"), {})).toMatchObject({
      status: 404,
      body: { error: "Unknown route" },
    });
  });

  it("a gateway without such routes answers 404 Unknown route to /webhooks/constructor and /webhooks/__proto__", async () => {
    const gw = await gateways.start({ config: webhookConfig({ open }) });
    for (const name of ["constructor", "toString", "__proto__", "valueOf"])
      expect([name, await postJson(gw.url(`/webhooks/${name}`), {})]).toMatchObject([
        name,
        { status: 404, body: { error: "Unknown route" } },
      ]);
  });
});
