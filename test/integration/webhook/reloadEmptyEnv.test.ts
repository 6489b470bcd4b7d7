import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postSignedIssue } from "../../helpers/http.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const SECRET = "empty-env-route-secret";
/** A route with a secret of its own, and a stdio server's environment that `.env` fills in. */
const CONFIG = webhookConfig(
  { r: { secret: SECRET } },
  {},
  {
    mcp_servers: {
      tools: { command: "node", args: ["server.mjs"], env: { TOKEN: "${MCP_TOKEN}" }, enabled: false },
    },
  },
);

const post = (running: TestGateway, id: string) =>
  postSignedIssue(running.url("/webhooks/r"), SECRET, { action: "opened" }, id);

describe("SIGHUP reload of an empty .env", () => {
  it("is refused while the running config read variables from it (truncated by an editor mid-save)", async () => {
    gw = await startTestGateway({ config: CONFIG, files: { ".env": "MCP_TOKEN=tok-1\n" } });
    const running = gw;
    for (const blank of ["", "\n# MCP_TOKEN=\n\n"]) {
      running.home.write(".env", blank, 0o600);
      expect(() => running.gateway.reload()).toThrow(
        `${join(running.home.dir, ".env")}: is empty (no variable in it) — the running config read 1 variable from it: write it whole and reload again (an editor may still have been writing it), or remove the file to run without it`,
      );
      expect((await post(running, `kept-${blank.length}`)).status).toBe(202);
    }
    running.home.write(".env", "MCP_TOKEN=tok-2\n", 0o600);
    expect(running.gateway.reload().routes).toEqual(["r"]);
  });

  it("is refused as an empty .env also when the route's secret came from it (not as a missing secret)", async () => {
    const config = webhookConfig({ r: { secret: "${ROUTE_SECRET}" } });
    gw = await startTestGateway({ config, files: { ".env": `ROUTE_SECRET=${SECRET}\n` } });
    const running = gw;
    running.home.write(".env", "", 0o600);
    expect(() => running.gateway.reload()).toThrow(
      `${join(running.home.dir, ".env")}: is empty (no variable in it) — the running config read 1 variable from it`,
    );
    expect((await post(running, "kept")).status).toBe(202);
    // An edit that left lines setting nothing (`NAME: value`) is named at its line, as at start, not as empty.
    running.home.write(".env", `ROUTE_SECRET: ${SECRET}\n`, 0o600);
    expect(() => running.gateway.reload()).toThrow(
      `${join(running.home.dir, ".env")}: line 1: not a NAME=value line — write ROUTE_SECRET=<value>, or start the line with # to keep it as a comment`,
    );
    expect((await post(running, "kept-2")).status).toBe(202);
  });

  it("is applied when the .env is removed, or when the running config read none from it either", async () => {
    gw = await startTestGateway({ config: CONFIG, files: { ".env": "MCP_TOKEN=tok-1\n" } });
    rmSync(join(gw.home.dir, ".env"));
    expect(gw.gateway.reload().routes).toEqual(["r"]);
    gw.home.write(".env", "# nothing yet\n", 0o600);
    expect(gw.gateway.reload().routes).toEqual(["r"]);
    expect((await post(gw, "applied")).status).toBe(202);
  });
});
