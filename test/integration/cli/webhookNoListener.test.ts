import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { startTestRedis } from "../../helpers/redis.js";
import { svc } from "./svc.js";

let home: TempHome;

/** The delivery history with one accepted request `d-1` to `route`, its payload kept. */
function writeHistory(home: TempHome, route: string): void {
  const record = {
    kind: "request",
    id: "d-1",
    at: new Date().toISOString(),
    route,
    status: 202,
    outcome: "accepted",
    content_type: "application/json",
    payload: '{"n":1}',
    payload_encoding: "utf8",
  };
  home.write("deliveries/history.jsonl", `${JSON.stringify(record)}\n`);
}
afterEach(async () => {
  await svc(home, ["gateway", "stop"]);
  home.cleanup();
});

describe("svc webhook subscribe|test when there is no port to show or send to", { timeout: 90_000 }, () => {
  it("a running MCP-only gateway (adapter off): subscribe writes nothing; test says the adapter is off, not 'start it'", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: { webhook: { enabled: false, port: 9123 } },
        mcp_servers: { idle: { command: "cat", lazy: true } },
      }),
    );
    expect((await svc(home, ["gateway", "start", "--timeout", "60"])).code).toBe(0);
    const subscribed = await svc(home, ["webhook", "subscribe", "a"]);
    expect(subscribed.code).toBe(1);
    expect(subscribed.stderr).toContain("the webhook adapter is off (");
    // A record made before the adapter was turned off.
    home.write("webhook_subscriptions.json", JSON.stringify({ a: { secret: "s" } }));
    const sent = await svc(home, ["webhook", "test", "a"]);
    expect(sent.code).toBe(1);
    expect(sent.stderr).toMatch(
      /svc: the running gateway \(pid \d+\) has no webhook listener: the webhook adapter is off \(.*config\.yaml: platforms\.webhook\.enabled is false\) — enable it with svc gateway setup --enable, then restart the gateway/,
    );
    expect(sent.stderr).not.toContain("cannot reach");
    // A redelivery of an event the route accepted before the adapter was turned off: the same words,
    // not "no gateway is running — start it".
    writeHistory(home, "a");
    const redelivered = await svc(home, ["webhook", "redeliver", "d-1"]);
    expect(redelivered.code).toBe(1);
    expect(redelivered.stderr).toMatch(
      /svc: the running gateway \(pid \d+\) has no webhook listener: the webhook adapter is off \(/,
    );
    expect(redelivered.stderr).not.toContain("no gateway is running");
  });

  it("a running worker instance (state.backend: redis, adapter off): test and redeliver name --port of a gateway that serves the Redis, not enabling this one's adapter", async () => {
    const redis = await startTestRedis();
    try {
      home = tempHome();
      home.write(
        "config.yaml",
        stringify({
          state: { backend: "redis", redis_url: redis.url, redis_key_prefix: "nolistener" },
          platforms: { webhook: { enabled: false, port: 9123 } },
        }),
      );
      expect((await svc(home, ["gateway", "start", "--timeout", "60"])).code).toBe(0);
      // A worker host subscribes too: the gateways sharing the Redis serve the subscription.
      expect((await svc(home, ["webhook", "subscribe", "a", "--secret", "s"])).code).toBe(0);
      const sent = await svc(home, ["webhook", "test", "a"]);
      expect(sent.code).toBe(1);
      expect(sent.stderr).toMatch(
        /svc: the running gateway \(pid \d+\) has no webhook listener: the webhook adapter is off \(.*config\.yaml: platforms\.webhook\.enabled is false\) — it runs the shared queue's runs \(state\.backend: redis\): send to a gateway sharing that Redis whose adapter is on, with --port <its port> when it runs on this host, or run this command on that gateway's host/,
      );
      expect(sent.stderr).not.toContain("svc gateway setup --enable");
      writeHistory(home, "a");
      const redelivered = await svc(home, ["webhook", "redeliver", "d-1"]);
      expect(redelivered.code).toBe(1);
      expect(redelivered.stderr).toContain(
        "it runs the shared queue's runs (state.backend: redis): send to a gateway sharing that Redis whose adapter is on",
      );
      expect(redelivered.stderr).not.toContain("svc gateway setup --enable");
      // No gateway running on this host (an admin host's, or the worker stopped): starting one here would
      // start a worker without a listener, so the advice is the same, not "start it".
      expect((await svc(home, ["gateway", "stop"])).code).toBe(0);
      for (const command of [
        ["webhook", "test", "a"],
        ["webhook", "redeliver", "d-1"],
      ]) {
        const unanswered = await svc(home, command);
        expect(unanswered.code).toBe(1);
        expect(unanswered.stderr).toContain(
          "the webhook adapter is off here, and the gateways sharing its Redis (state.backend: redis) whose adapter is on serve the route: send to one of them, with --port <its port> when it runs on this host, or run this command on its host",
        );
        expect(unanswered.stderr).not.toContain("svc gateway start");
      }
    } finally {
      await svc(home, ["gateway", "stop"]);
      await redis.cleanup();
    }
  });

  it("redeliver --port 0 is refused as test's is: a request to port 0 goes to port 80, not to a gateway", async () => {
    home = tempHome();
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1" } } }));
    home.write("webhook_subscriptions.json", JSON.stringify({ a: { secret: "s" } }));
    writeHistory(home, "a");
    for (const command of [
      ["webhook", "redeliver", "d-1", "--port", "0"],
      ["webhook", "test", "a", "--port", "0"],
    ]) {
      const sent = await svc(home, command);
      expect(sent.code).toBe(2);
      expect(sent.stderr).toBe(
        "svc: --port 0: give the port the gateway listens on (svc gateway status shows it)\n",
      );
    }
  });

  it("port 0 in config.yaml and no gateway running: subscribe says the port is not known yet; test refuses to send to :0", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1", port: 0 } } }),
    );
    const subscribed = await svc(home, ["webhook", "subscribe", "a"]);
    expect(subscribed.code).toBe(0);
    expect(subscribed.stderr).toContain("platforms.webhook.port is 0 (");
    expect(subscribed.stderr).toContain("the URL's port is not known yet — svc gateway status shows it");
    const sent = await svc(home, ["webhook", "test", "a"]);
    expect(sent.code).toBe(2);
    expect(sent.stderr).toContain("platforms.webhook.port is 0 in ");
    expect(sent.stderr).toContain("no gateway is running, so there is no port to send to");
    // Written under extra (whose value wins over a port written directly), it is named there.
    home.write(
      "config.yaml",
      stringify({
        platforms: { webhook: { enabled: true, host: "127.0.0.1", port: 8644, extra: { port: 0 } } },
      }),
    );
    expect((await svc(home, ["webhook", "subscribe", "a"])).stderr).toContain(
      "platforms.webhook.extra.port is 0 (",
    );
    expect((await svc(home, ["webhook", "test", "a"])).stderr).toContain(
      "platforms.webhook.extra.port is 0 in ",
    );
  });
});
