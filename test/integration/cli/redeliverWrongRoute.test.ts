import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc, svcEach } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

/** A kept 202 request of `id` on `route`, as the gateway records it. */
const requestLine = (id: string, route: string) =>
  `${JSON.stringify({ kind: "request", id, at: new Date().toISOString(), route, status: 202, outcome: "accepted", content_type: "application/json", payload_encoding: "utf8", payload: '{"n":1}' })}\n`;

describe("svc webhook redeliver to a route the delivery did not reach, or that is gone", () => {
  it("is refused (exit 2) naming the routes it reached, and the one meant when --route is a typo of one", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: {
          webhook: {
            enabled: true,
            host: "127.0.0.1",
            routes: {
              alpha: { secret: "ops-wrong-route-secret-a" },
              beta: { secret: "ops-wrong-route-secret-b" },
              solo: { secret: "ops-wrong-route-secret-s" },
            },
          },
        },
      }),
    );
    home.write(
      "deliveries/history.jsonl",
      requestLine("ops-shared-delivery-41", "alpha") +
        requestLine("ops-shared-delivery-41", "beta") +
        requestLine("ops-solo-delivery-42", "solo"),
      0o600,
    );
    const [typo, other, single, unknown] = await svcEach(home, [
      ["webhook", "redeliver", "ops-shared-delivery-41", "--route", "alpah"],
      ["webhook", "redeliver", "ops-shared-delivery-41", "--route", "gamma"],
      ["webhook", "redeliver", "ops-solo-delivery-42", "--route", "alpha"],
      ["webhook", "redeliver", "ops-missing-delivery-43", "--route", "alpha"],
    ]);
    expect(typo).toMatchObject({ code: 2, stdout: "" });
    expect(typo.stderr).toContain(
      "delivery ops-shared-delivery-41 did not reach route alpah (it reached alpha, beta) — did you mean alpha?",
    );
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(
      "delivery ops-shared-delivery-41 did not reach route gamma (it reached alpha, beta) — give --route one of them",
    );
    expect(single.code).toBe(2);
    expect(single.stderr).toContain(
      "delivery ops-solo-delivery-42 did not reach route alpha (it reached solo) — leave out --route, or give --route solo",
    );
    // An ID no route received: as before.
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      'no delivery "ops-missing-delivery-43" for route alpha in the recent history',
    );
  });

  it("of a delivery whose route was removed since is refused (exit 2) saying so, and how to redeliver it", async () => {
    home = tempHome();
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1" } } }));
    home.write("webhook_subscriptions.json", JSON.stringify({}), 0o600);
    home.write("deliveries/history.jsonl", requestLine("ops-removed-delivery-44", "ops-removed-sub"), 0o600);
    const res = await svc(home, ["webhook", "redeliver", "ops-removed-delivery-44", "--port", "9"]);
    expect(res).toMatchObject({ code: 2, stdout: "" });
    expect(res.stderr).toContain(
      `the delivery was received by route "ops-removed-sub", which is gone since: no route of that name in ${home.dir}/config.yaml and no dynamic subscription in ${home.dir}/webhook_subscriptions.json — nothing would take the redelivery (the gateway answers 404); create the route again (svc webhook subscribe ops-removed-sub, or in config.yaml), then redeliver`,
    );
  });
});
