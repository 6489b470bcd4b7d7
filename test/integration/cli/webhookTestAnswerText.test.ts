import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

let home: TempHome;
let server: Server;
afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
  home.cleanup();
});

/**
 * `svc webhook test` prints the answer of whatever listens at the route's address — another process when no
 * gateway of this SVC_HOME runs. Its text went to the terminal as it came: an escape sequence in it cleared
 * the screen or retitled the window, a bidi override reordered the line, where `svc webhook redeliver`
 * (and every other command quoting a remote answer) shows them as `\u001b`, `\u202e`.
 */
describe("svc webhook test shows the answer's control and bidi characters escaped", {
  timeout: 60_000,
}, () => {
  it("an answer with an escape sequence and a bidi override is printed with both escaped", async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        response.writeHead(404, { "content-type": "application/json" });
        response.end('{"error":"\u001b[2J\u001b]0;answer-title\u0007Unknown \u202eroute"}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    home = tempHome();
    const config = cliConfig();
    (config.platforms as { webhook: { port: number } }).webhook.port = port;
    home.write("config.yaml", stringify(config));
    expect((await svc(home, ["webhook", "subscribe", "escaped-answer"])).code).toBe(0);
    const sent = await svc(home, ["webhook", "test", "escaped-answer"]);
    expect(sent.code).toBe(1);
    expect(sent.stdout).toContain("404 Not Found");
    expect(sent.stdout).toContain('{"error":"\\u001b[2J\\u001b]0;answer-title\\u0007Unknown \\u202eroute"}');
    expect(sent.stdout).not.toContain("\u001b");
    expect(sent.stdout).not.toContain("\u202e");
  });
});
