import { sign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import {
  HTTP_SERVERS,
  RECORDER_AGENT,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson, request } from "../../helpers/http.js";

const SECRET = "profile-secret";
const UNKNOWN = { status: 404, body: { error: "Unknown route" } };

describe("profile-prefixed routing (spec 4.1, 5 rule 3) with gateway.multiplex_profiles on", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "profiles/work/scripts/tag.sh": "cat >/dev/null\necho 'from work profile'\n",
        "scripts/tag.sh": "cat >/dev/null\necho 'from default profile'\n",
      },
      config: webhookConfig(
        {
          work_only: { secret: SECRET, profile: "work", script: "tag.sh", prompt: "{script_output}" },
          unbound: { secret: SECRET, script: "tag.sh", prompt: "{script_output}" },
          bound_default: { secret: SECRET, profile: "default" },
        },
        { rate_limit: 1000 },
        {
          gateway: { multiplex_profiles: true },
          agent: recorderAgent(),
        },
      ),
    });
  });
  afterAll(() => gw.stop());

  const signed = async (path: string, body: Record<string, unknown> = {}) => {
    const text = JSON.stringify(body);
    return postJson(gw.url(path), text, { "X-Hub-Signature-256": await sign(SECRET, text) });
  };
  const prompt = async (id: string) => (await waitForRun(gw, id)).prompt;

  it("a bound route answers under its own profile, and its script comes from that profile's scripts/", async () => {
    const res = await signed("/p/work/webhooks/work_only");
    expect(res).toMatchObject({ status: 202, body: { route: "work_only" } });
    expect(await prompt(res.body.delivery_id as string)).toBe("from work profile");
  });

  it("a validly signed request under another profile or without a prefix looks exactly like an unknown route", async () => {
    expect(await signed("/p/home/webhooks/work_only")).toMatchObject(UNKNOWN);
    expect(await signed("/p/default/webhooks/work_only")).toMatchObject(UNKNOWN);
    expect(await signed("/webhooks/work_only")).toMatchObject(UNKNOWN);
    expect(await signed("/p/home/webhooks/no_such_route")).toMatchObject(UNKNOWN);
  });

  it("the mismatch is decided before auth: an unsigned probe gets the same 404, not a 401", async () => {
    expect(await postJson(gw.url("/p/home/webhooks/work_only"), {})).toMatchObject(UNKNOWN);
  });

  it("and before the method: a GET under another profile is the same 404, under its own the route's 405", async () => {
    expect(await request(gw.url("/p/home/webhooks/work_only"))).toMatchObject(UNKNOWN);
    expect(await request(gw.url("/webhooks/work_only"))).toMatchObject(UNKNOWN);
    expect(await request(gw.url("/p/work/webhooks/work_only"))).toMatchObject({
      status: 405,
      body: { error: "Method not allowed" },
    });
  });

  it("a route bound to default answers like an unbound one; the profile segment is compared exactly, after percent-decoding", async () => {
    expect((await signed("/webhooks/bound_default")).status).toBe(202);
    expect((await signed("/p/default/webhooks/bound_default")).status).toBe(202);
    expect(await signed("/p/work/webhooks/bound_default")).toMatchObject(UNKNOWN);
    expect(await signed("/p/Work/webhooks/work_only")).toMatchObject(UNKNOWN);
    expect((await signed("/p/w%6Frk/webhooks/work_only")).status).toBe(202);
  });

  it("an unbound route is default-profile-only: /webhooks/<r> and /p/default/webhooks/<r>", async () => {
    const plain = await signed("/webhooks/unbound");
    expect(plain.status).toBe(202);
    expect(await prompt(plain.body.delivery_id as string)).toBe("from default profile");
    expect((await signed("/p/default/webhooks/unbound")).status).toBe(202);
    expect(await signed("/p/work/webhooks/unbound")).toMatchObject(UNKNOWN);
  });
});

describe("with multiplexing off", () => {
  it("profile-prefixed paths do not exist and a profile binding is not enforced", async () => {
    const gw = await startTestGateway({
      config: webhookConfig({ bound: { secret: "INSECURE_NO_AUTH", profile: "work" } }),
    });
    try {
      expect(await postJson(gw.url("/p/work/webhooks/bound"), {})).toMatchObject({
        status: 404,
        body: { error: "Not found" },
      });
      expect(await postJson(gw.url("/webhooks/bound"), {})).toMatchObject({ status: 202 });
    } finally {
      await gw.stop();
    }
  });
});

describe("multiplexing turned off by a reload, with subscriptions bound to a profile", () => {
  it("names each subscription that moved in the reload's WARN, as it names config.yaml's routes", async () => {
    // Seen: the line named the config.yaml route only; the sender of /p/work/webhooks/sub got 404 unannounced.
    const config = (multiplex: boolean) =>
      webhookConfig(
        { route: { secret: "INSECURE_NO_AUTH" } },
        {},
        { gateway: { multiplex_profiles: multiplex } },
      );
    const gw = await startTestGateway({
      config: config(true),
      files: {
        "webhook_subscriptions.json": JSON.stringify({
          sub: { secret: "INSECURE_NO_AUTH", profile: "work" },
          route: { secret: "INSECURE_NO_AUTH", profile: "work" },
        }),
      },
    });
    try {
      expect((await postJson(gw.url("/p/work/webhooks/sub"), {})).status).toBe(202);
      gw.home.write("config.yaml", stringify(config(false)));
      gw.gateway.reload();
      const warned = gw.logs().filter((l) => l.msg.includes("moved route"));
      expect(warned.map((l) => l.msg)).toEqual([
        expect.stringContaining(
          "moved routes platforms.webhook.routes.route to /webhooks/route, no longer at /p/default/webhooks/route, and subscription sub to /webhooks/sub, no longer at /p/work/webhooks/sub (",
        ),
      ]);
      expect(await postJson(gw.url("/p/work/webhooks/sub"), {})).toMatchObject({ status: 404 });
    } finally {
      await gw.stop();
    }
  });
});

describe.each(HTTP_SERVERS)(
  "multiplexing turned on and off by a reload (SIGHUP), on the %s server",
  (http) => {
    it("/p/<profile>/ paths appear and disappear at once, and the route's binding follows, also on ingress threads", async () => {
      // Ingress threads answer the paths the head decides themselves, but leave /p/... to the main
      // thread, whose multiplexing setting a reload swaps: no thread keeps the value it started with.
      const config = (multiplex: boolean) =>
        webhookConfig(
          { bound: { secret: "INSECURE_NO_AUTH", profile: "work" }, unbound: { secret: "INSECURE_NO_AUTH" } },
          http === "uws-threads" ? { workers: 2 } : {},
          { gateway: { multiplex_profiles: multiplex } },
        );
      const gw = await startTestGateway({ http, config: config(false) });
      try {
        const NOT_FOUND = { status: 404, body: { error: "Not found" } };
        expect(await postJson(gw.url("/p/work/webhooks/bound"), {})).toMatchObject(NOT_FOUND);
        expect((await postJson(gw.url("/webhooks/bound"), {})).status).toBe(202);

        gw.home.write("config.yaml", stringify(config(true)));
        gw.gateway.reload();
        expect((await postJson(gw.url("/p/work/webhooks/bound"), {})).status).toBe(202);
        expect(await postJson(gw.url("/webhooks/bound"), {})).toMatchObject(UNKNOWN);
        expect((await postJson(gw.url("/p/default/webhooks/unbound"), {})).status).toBe(202);
        expect(await postJson(gw.url("/p/work/webhooks/unbound"), {})).toMatchObject(UNKNOWN);
        expect(await request(gw.url("/p/work/webhooks/bound"))).toMatchObject({
          status: 405,
          body: { error: "Method not allowed" },
        });

        gw.home.write("config.yaml", stringify(config(false)));
        gw.gateway.reload();
        expect(await postJson(gw.url("/p/work/webhooks/bound"), {})).toMatchObject(NOT_FOUND);
        expect(await postJson(gw.url("/p/default/webhooks/unbound"), {})).toMatchObject(NOT_FOUND);
        expect((await postJson(gw.url("/webhooks/bound"), {})).status).toBe(202);
        // No restart was asked for: multiplexing is swapped in place.
        expect(gw.logs().filter((l) => l.msg.includes("takes effect after a restart"))).toEqual([]);
      } finally {
        await gw.stop();
      }
    });
  },
);
