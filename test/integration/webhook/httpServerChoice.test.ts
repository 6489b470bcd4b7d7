import { connect } from "node:net";
import { sign as signGithub } from "@octokit/webhooks-methods";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { rawHttp } from "../../helpers/http.js";

/** `platforms.webhook.http_server`: uWS speaks HTTP/1.1 only; `node` serves HTTP/1.0 clients too. */

const SECRET = "choice-secret";
const gw = gatewayPerTest();

/** What nginx sends upstream with its default `proxy_http_version 1.0`. */
function nginxStyle(path: string, body: string, headers: Record<string, string>): string {
  const lines = [`POST ${path} HTTP/1.0`, "Host: svc-upstream", "Connection: close"];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  lines.push("Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join("\r\n")}\r\n\r\n${body}`;
}

describe("platforms.webhook.http_server", () => {
  it("node: an HTTP/1.0 request (nginx's default upstream) is answered — 202 on a route, 200 on /health", async () => {
    const live = await gw.start({
      config: webhookConfig({ pr: { secret: SECRET } }, { http_server: "node" }),
    });
    const body = '{"action":"opened","number":7}';
    const headers = {
      "X-GitHub-Event": "pull_request",
      "X-GitHub-Delivery": "d-http10",
      "X-Hub-Signature-256": await signGithub(SECRET, body),
    };
    const accepted = await rawHttp(live.gateway.port, [nginxStyle("/webhooks/pr", body, headers)]);
    expect(accepted.status).toBe(202);
    expect(JSON.parse(accepted.body)).toEqual({
      status: "accepted",
      route: "pr",
      event: "pull_request",
      delivery_id: "d-http10",
    });
    const health = await rawHttp(live.gateway.port, ["GET /health HTTP/1.0\r\n\r\n"]);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: "ok", platform: "webhook" });
  });

  it("node: a request target in absolute form (through a forward proxy) names the same route (RFC 9112 §3.2.2)", async () => {
    const live = await gw.start({
      config: webhookConfig({ pr: { secret: SECRET } }, { http_server: "node" }),
    });
    const body = '{"number":8}';
    const signature = await signGithub(SECRET, body);
    for (const target of ["http://svc.example:8644/webhooks/pr?x=1", "HTTPS://svc.example/webhooks/pr"]) {
      const answer = await rawHttp(live.gateway.port, [
        `POST ${target} HTTP/1.1\r\nHost: svc.example\r\nX-Hub-Signature-256: ${signature}\r\n` +
          `Content-Length: ${body.length}\r\n\r\n${body}`,
      ]);
      expect({ status: answer.status, body: JSON.parse(answer.body) }, target).toMatchObject({
        status: 202,
        body: { status: "accepted", route: "pr" },
      });
    }
    const health = await rawHttp(live.gateway.port, [
      "GET http://svc.example/health HTTP/1.1\r\nHost: svc.example\r\n\r\n",
    ]);
    expect(health.status).toBe(200);
  });

  it("node: Expect: 100-continue (curl, above 1 MiB) — a refused request is answered at once, with no 100 and no upload", async () => {
    const live = await gw.start({
      config: webhookConfig({ pr: { secret: SECRET } }, { http_server: "node", max_body_bytes: 1024 }),
    });
    const body = '{"number":9}';
    const signature = await signGithub(SECRET, body);
    const head = (path: string, length: number) =>
      `POST ${path} HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nX-Hub-Signature-256: ${signature}\r\n` +
      `Content-Length: ${length}\r\n\r\n`;
    /** Sends the head, and the body only once 100 Continue arrives; resolves with all that was read. */
    const exchange = (path: string, length: number) =>
      new Promise<string>((resolve) => {
        const socket = connect(live.gateway.port, "127.0.0.1");
        let received = "";
        socket.on("data", (data) => {
          received += data.toString("utf8");
          if (received === "HTTP/1.1 100 Continue\r\n\r\n") socket.write(body);
        });
        socket.on("close", () => resolve(received));
        socket.setTimeout(3000, () => socket.destroy());
        socket.write(head(path, length));
      });
    for (const [path, length, status] of [
      ["/webhooks/pr", 5_000_000, "413"],
      ["/webhooks/nope", body.length, "404"],
    ] as const) {
      const answer = await exchange(path, length);
      expect(answer.startsWith(`HTTP/1.1 ${status} `), answer).toBe(true);
      expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    }
    const accepted = await new Promise<string>((resolve) => {
      const socket = connect(live.gateway.port, "127.0.0.1");
      let received = "";
      socket.on("data", (data) => {
        received += data.toString("utf8");
        if (received === "HTTP/1.1 100 Continue\r\n\r\n") socket.write(body);
        if (received.includes('"status":"accepted"')) socket.destroy();
      });
      socket.on("close", () => resolve(received));
      socket.setTimeout(3000, () => socket.destroy());
      socket.write(head("/webhooks/pr", body.length));
    });
    expect(accepted).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 202 /);
  });

  it("is uws by default, and a value other than uws or node is a config error naming the key", () => {
    const home = tempHome();
    try {
      home.write("config.yaml", "platforms:\n  webhook:\n    enabled: true\n");
      expect(loadConfig({ home: home.dir, env: {} }).config.platforms.webhook.http_server).toBe("uws");
      home.write("config.yaml", "platforms:\n  webhook:\n    enabled: true\n    http_server: nginx\n");
      expect(() => loadConfig({ home: home.dir, env: {} })).toThrow(/platforms\.webhook\.http_server/);
    } finally {
      home.cleanup();
    }
  });
});
