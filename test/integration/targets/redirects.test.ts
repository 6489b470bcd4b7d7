import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryError } from "../../../src/io/targets/target.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { message, registryFor, sendError } from "./support.js";

/**
 * A base_url that redirects (http:// to https://, an old host name) must not look like a delivery: a
 * followed 301/302 turns the POST into a GET without body (Fetch standard), and a GET of Discord's
 * `/channels/<id>/messages` answers 200 with the channel's messages. The redirect fails the delivery
 * and names the fix; the Location's path (it may repeat a token) is not quoted.
 */
let api: FakeApi;
beforeAll(async () => {
  api = await startFakeApi((r) =>
    r.method === "POST"
      ? { status: 301, headers: { location: `${api.url}/moved/bot123:TG-SECRET${r.path}` } }
      : { json: [] },
  );
});
afterAll(() => api.close());

describe("a redirecting base_url", () => {
  it("discord: fails naming the redirect and base_url; no GET is sent in place of the POST", async () => {
    api.requests.length = 0;
    const registry = registryFor({ discord: { enabled: true, token: "D", base_url: api.url } });
    const error = await sendError(registry, "discord", message("hello", { chat_id: "1" }));
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).transient).toBe(false);
    expect((error as Error).message).toBe(
      `discord: create message: HTTP 301 — the API redirects to ${api.url}; set base_url to the address it redirects to (svc does not follow redirects: they would turn a POST into a GET)`,
    );
    expect(api.requests.map((r) => r.method)).toEqual(["POST"]);
  });

  it("telegram: the token in the Location is not quoted", async () => {
    const registry = registryFor({ telegram: { enabled: true, token: "123:TG-SECRET", base_url: api.url } });
    const error = await sendError(registry, "telegram", message("hello", { chat_id: "1" }));
    expect((error as Error).message).toContain("HTTP 301");
    expect((error as Error).message).not.toContain("TG-SECRET");
  });
});
