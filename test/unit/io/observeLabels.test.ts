import { describe, expect, it } from "vitest";
import type { RequestHead } from "../../../src/io/http/core.js";
import { observeRequests, type RequestMetrics } from "../../../src/io/http/observe.js";
import type { Logger } from "../../../src/io/log.js";
import { errorOutcome, type Outcome, outcome } from "../../../src/streams/types.js";

/** The observed handler over a fake pipeline answering from `answers`, with the labels metrics got. */
function observed(routes: Set<string>, multiplex: { on: boolean }) {
  const labels: string[] = [];
  const history: string[] = [];
  const metrics: RequestMetrics = {
    answered: (route, status) => labels.push(`${route} ${status}`),
    render: async () => ({ contentType: "text/plain", text: "" }),
  };
  const handler = observeRequests(
    (head, _body, reply) => {
      const name = head.path.split("/").at(-1) as string;
      const live = routes.has(name) && (multiplex.on || !head.path.startsWith("/p/"));
      reply(live ? outcome(202, { status: "accepted" }) : errorOutcome(404, "Unknown route"));
    },
    {
      logger: {} as Logger,
      now: () => 0,
      multiplexProfiles: () => multiplex.on,
      accessLog: () => false,
      // As the gateway asks it: a configured route's name, whatever the status.
      isRoute: (name) => routes.has(name),
      metrics,
      onRouteRequest: (route, _head, _body, answer: Outcome) => history.push(`${route} ${answer.status}`),
    },
  );
  const post = (path: string) => {
    const head: RequestHead = { method: "POST", path, headers: {} };
    handler(head, { read: (_limit, done) => done(Buffer.from("{}")) }, () => {});
  };
  return { post, labels, history };
}

describe("request metrics and delivery history label a path by the routes in force now", () => {
  it("a path counted under a route is (unknown) once a reload removes that route", () => {
    const routes = new Set(["a"]);
    const { post, labels, history } = observed(routes, { on: false });
    post("/webhooks/a");
    routes.delete("a");
    post("/webhooks/a");
    expect(labels).toEqual(["a 202", "(unknown) 404"]);
    expect(history).toEqual(["a 202"]);
  });

  it("a profile-prefixed path is (unknown) once multiplexing is turned off", () => {
    const multiplex = { on: true };
    const { post, labels } = observed(new Set(["wk"]), multiplex);
    post("/p/work/webhooks/wk");
    multiplex.on = false;
    post("/p/work/webhooks/wk");
    multiplex.on = true;
    post("/p/work/webhooks/wk");
    expect(labels).toEqual(["wk 202", "(unknown) 404", "wk 202"]);
  });
});

describe("a request the HTTP server refused itself", () => {
  it("is kept in the delivery history under its route, as its metrics and access log count it; a path naming none is not", () => {
    const history: string[] = [];
    const labels: string[] = [];
    const handler = observeRequests(() => {}, {
      logger: {} as Logger,
      now: () => 0,
      multiplexProfiles: () => false,
      accessLog: () => false,
      isRoute: (name) => name === "a",
      metrics: {
        answered: (route, status) => labels.push(`${route} ${status}`),
        render: async () => ({ contentType: "text/plain", text: "" }),
      },
      onRouteRequest: (route, head, body, answer) =>
        history.push(`${route} ${answer.status} ${head.headers["x-github-delivery"]} ${body === undefined}`),
    });
    const expectationFailed = errorOutcome(417, "Expectation failed");
    const head = (path: string): RequestHead => ({
      method: "POST",
      path,
      headers: { expect: "weird", "x-github-delivery": "e-1" },
    });
    handler.refused?.(expectationFailed, head("/webhooks/a"));
    handler.refused?.(expectationFailed, head("/webhooks/invented"));
    handler.refused?.(errorOutcome(400, "Bad request"));
    expect(labels).toEqual(["a 417", "(unknown) 417", "(unknown) 400"]);
    expect(history).toEqual(["a 417 e-1 true"]);
  });
});
