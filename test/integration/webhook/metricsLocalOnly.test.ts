import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { gatewayPerTest, HTTP_SERVERS, webhookConfig } from "../../helpers/gateway.js";
import { rawHttp } from "../../helpers/http.js";

/**
 * Unset, `platforms.webhook.metrics` serves `/metrics` on a loopback bind because only this machine
 * reaches it there. A web page does too, though: one whose DNS name is rebound to 127.0.0.1 reads the
 * answer as its own (`Host: attacker.example`), and so does anyone on the internet through a reverse
 * proxy in front of the loopback bind (the setup the README suggests), which forwards every path. Such a
 * request was served every route's name and traffic.
 */

const gw = gatewayPerTest();

async function scrape(port: number, headers: string): Promise<number> {
  return (await rawHttp(port, [`GET /metrics HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`])).status;
}

/** What a request from elsewhere than a local scraper carries besides its Host. */
const FROM_ELSEWHERE = [
  "Origin: http://attacker.example\r\n",
  "Sec-Fetch-Site: cross-site\r\n",
  "X-Forwarded-For: 203.0.113.9\r\n",
  "Forwarded: for=203.0.113.9;proto=https\r\n",
  "X-Real-IP: 203.0.113.9\r\n",
];

describe("GET /metrics on a loopback bind with metrics unset: this machine's scrapers only", {
  timeout: 60_000,
}, () => {
  for (const http of HTTP_SERVERS) {
    it(`${http}: a local scraper is served; a rebound DNS name, a browser's request and a proxied one get 404`, async () => {
      const live = await gw.start({ http, config: webhookConfig({}, { host: "127.0.0.1" }) });
      const port = live.gateway.port;
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, "127.0.0.1", `[::1]:${port}`])
        expect(await scrape(port, `Host: ${host}\r\n`), host).toBe(200);
      expect(await scrape(port, `Host: attacker.example:${port}\r\n`)).toBe(404);
      for (const extra of FROM_ELSEWHERE)
        expect(await scrape(port, `Host: 127.0.0.1:${port}\r\n${extra}`), extra).toBe(404);
    });
  }

  it("node: a request target in absolute form is judged by the host it names, which stands in for Host (RFC 9112 §3.2.2)", async () => {
    const live = await gw.start({ http: "node", config: webhookConfig({}, { host: "127.0.0.1" }) });
    const port = live.gateway.port;
    const scrapeAt = async (target: string, host: string) =>
      (await rawHttp(port, [`GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`])).status;
    expect(await scrapeAt("http://attacker.example/metrics", "localhost")).toBe(404);
    expect(await scrapeAt(`http://localhost:${port}/metrics`, "attacker.example")).toBe(200);
    expect(await scrapeAt("http://user@attacker.example/metrics", "127.0.0.1")).toBe(404);
    // A target naming no host leaves the request's Host to judge it.
    expect(await scrapeAt("http:///metrics", "attacker.example")).toBe(404);
    expect(await scrapeAt("http://@/metrics", "attacker.example")).toBe(404);
    expect(await scrapeAt("http:///metrics", "localhost")).toBe(200);
  });

  for (const http of HTTP_SERVERS) {
    it(`${http}: to a request from elsewhere /metrics answers exactly as an unknown path does, every method (not "Unknown route", nor a 405 that says it is there)`, async () => {
      const live = await gw.start({ http, config: webhookConfig({}, { host: "127.0.0.1" }) });
      const port = live.gateway.port;
      // Read the whole answer: its Content-Length of body, none after a HEAD's.
      const answer = (method: string, path: string, headers: string) =>
        new Promise<{ head: string; body: string }>((resolve, reject) => {
          const body = method === "POST" || method === "PUT" ? "Content-Length: 2\r\n\r\n{}" : "\r\n";
          const socket = connect(port, "127.0.0.1", () =>
            socket.write(`${method} ${path} HTTP/1.1\r\n${headers}Connection: close\r\n${body}`),
          );
          let received = "";
          socket.on("data", (data) => {
            received += data.toString("utf8");
            const split = received.indexOf("\r\n\r\n");
            if (split === -1) return;
            const head = received.slice(0, split);
            const length = method === "HEAD" ? 0 : Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
            if (Buffer.byteLength(received) - split - 4 < length) return;
            socket.destroy();
            // The same status line, headers and body, but for the time of day.
            resolve({ head: head.replace(/\r\nDate: [^\r]*/i, ""), body: received.slice(split + 4) });
          });
          socket.on("error", reject);
        });
      for (const method of ["GET", "HEAD", "POST", "PUT", "OPTIONS", "DELETE"])
        for (const from of [
          `Host: attacker.example:${port}\r\n`,
          `Host: 127.0.0.1:${port}\r\nOrigin: http://a.example\r\n`,
        ])
          expect(await answer(method, "/metrics", from), `${method} ${from}`).toEqual(
            await answer(method, "/elsewhere", from),
          );
      expect((await answer("GET", "/metrics", `Host: attacker.example:${port}\r\n`)).body).toBe(
        '{"error":"Not found"}',
      );
    });
  }

  it("metrics: true serves them all, as it serves any client", async () => {
    const live = await gw.start({ config: webhookConfig({}, { host: "127.0.0.1", metrics: true }) });
    const port = live.gateway.port;
    expect(await scrape(port, `Host: metrics.example:${port}\r\n`)).toBe(200);
    for (const extra of FROM_ELSEWHERE)
      expect(await scrape(port, `Host: 127.0.0.1:${port}\r\n${extra}`), extra).toBe(200);
  });
});
