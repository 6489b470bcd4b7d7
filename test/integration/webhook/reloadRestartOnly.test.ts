import { rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { callTool, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startRecordingMcp } from "../../fixtures/mcp/recordingServer.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson, postSignedIssue } from "../../helpers/http.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const ROUTES = { r: { secret: "INSECURE_NO_AUTH" } };
const STARTED = { agent: { max_concurrent_runs: 4 }, gateway: { approvals: "deny" } };

/** The WARN lines a reload logs for settings that wait for a restart. */
const restartWarnings = (running: TestGateway) =>
  running
    .logs()
    .filter((l) => l.level === 40 && l.msg.includes("after a restart"))
    .map((l) => l.msg);

describe("SIGHUP reload names the changed settings that only a restart applies", () => {
  it("warns for agent.max_concurrent_runs and gateway.approvals, and not when nothing of the kind changed", async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        ROUTES,
        {},
        { agent: { max_concurrent_runs: 4 }, gateway: { approvals: "deny" } },
      ),
    });
    const running = gw;

    running.home.write(
      "config.yaml",
      stringify(
        webhookConfig(
          ROUTES,
          { rate_limit: 5 },
          { agent: { max_concurrent_runs: 4 }, gateway: { approvals: "deny" } },
        ),
      ),
    );
    running.gateway.reload();
    expect(restartWarnings(running)).toEqual([]);

    running.home.write(
      "config.yaml",
      stringify(
        webhookConfig(ROUTES, {}, { agent: { max_concurrent_runs: 1 }, gateway: { approvals: "allow" } }),
      ),
    );
    running.gateway.reload();
    await expect
      .poll(() => restartWarnings(running))
      .toEqual([
        "[gateway] agent.max_concurrent_runs, gateway.approvals changed: this takes effect after a restart",
      ]);

    // Back to what the gateway started with: nothing waits for a restart any more.
    running.home.write("config.yaml", stringify(webhookConfig(ROUTES, {}, STARTED)));
    running.gateway.reload();
    running.home.write("config.yaml", stringify(webhookConfig(ROUTES, { rate_limit: 7 }, STARTED)));
    running.gateway.reload();
    await expect
      .poll(() => running.logs().filter((l) => l.msg.startsWith("[webhook] Reloaded")).length)
      .toBe(4);
    expect(restartWarnings(running)).toHaveLength(1);
  });

  it("a reload to gateway.approvals: allow leaves the calls of a named profile's runs denied until a restart", async () => {
    const [model, notes] = await Promise.all([startFakeOpenAI(), startRecordingMcp()]);
    try {
      const config = (approvals: string) =>
        webhookConfig(
          { w: { secret: "s3cret-s3cret", profile: "work", toolsets: ["notes"] } },
          {},
          {
            gateway: { multiplex_profiles: true, approvals },
            agent: { provider: "openai", model: "m", base_url: model.baseUrl },
            mcp_servers: { notes: { url: notes.url, trust: "untrusted" } },
          },
        );
      gw = await startTestGateway({ config: config("deny") });
      const running = gw;
      running.home.write("config.yaml", stringify(config("allow")));
      running.gateway.reload();
      await expect.poll(() => restartWarnings(running), { timeout: 10_000 }).toHaveLength(1);
      // The work profile's connections start at its first run, after the reload.
      model.script(callTool("mcp__notes__delete_item", { id: "x" }), { text: "done" });
      const res = await postSignedIssue(running.url("/p/work/webhooks/w"), "s3cret-s3cret", {}, "d1");
      expect(res.status).toBe(202);
      await expect.poll(() => model.requests.length, { timeout: 10_000 }).toBe(2);
      const messages = (model.requests[1]?.json.messages ?? []) as Array<{ role: string; content: string }>;
      const tool = messages.find((m) => m.role === "tool");
      expect(tool?.content).toMatch(/^refused: .*needs approval/);
      expect(notes.calls).toEqual([]);
    } finally {
      await Promise.all([model.close(), notes.close()]);
    }
  });

  it("warns when platforms.webhook.enabled changes: the listener keeps serving until a restart", async () => {
    gw = await startTestGateway({ config: webhookConfig(ROUTES, {}, STARTED) });
    const running = gw;
    const config = webhookConfig(ROUTES, {}, STARTED) as { platforms: { webhook: Record<string, unknown> } };
    config.platforms.webhook.enabled = false;
    running.home.write("config.yaml", stringify(config));
    running.gateway.reload();
    await expect
      .poll(() => restartWarnings(running))
      .toEqual(["[gateway] platforms.webhook.enabled changed: this takes effect after a restart"]);
  });

  it("names WEBHOOK_ENABLED when .env's value changed it, not only the config.yaml key that did not change", async () => {
    gw = await startTestGateway({
      config: webhookConfig(ROUTES, {}, STARTED),
      files: { ".env": "WEBHOOK_ENABLED=true\n" },
    });
    const running = gw;
    running.home.write(".env", "WEBHOOK_ENABLED=false\n");
    running.gateway.reload();
    await expect
      .poll(() => restartWarnings(running))
      .toEqual([
        "[gateway] platforms.webhook.enabled (set by WEBHOOK_ENABLED) changed: this takes effect after a restart",
      ]);
  });

  it("names the ${VAR} a restart-only key is written with when .env's value changed it, never the value", async () => {
    gw = await startTestGateway({
      config: webhookConfig(ROUTES, {}, { ...STARTED, gateway: { approvals: "${APPROVALS}" } }),
      files: { ".env": "APPROVALS=deny\n" },
    });
    const running = gw;
    running.home.write(".env", "APPROVALS=allow\n");
    running.gateway.reload();
    await expect
      .poll(() => restartWarnings(running))
      .toEqual([
        "[gateway] gateway.approvals (from ${APPROVALS}) changed: this takes effect after a restart",
      ]);
  });

  it("warns when the state backend changes: the journal (or Redis connection) is opened once, at start", async () => {
    gw = await startTestGateway({ config: webhookConfig(ROUTES, {}, STARTED) });
    const running = gw;
    running.home.write(
      "config.yaml",
      stringify(
        webhookConfig(
          ROUTES,
          {},
          { ...STARTED, state: { backend: "redis", redis_url: "redis://127.0.0.1:1/0" } },
        ),
      ),
    );
    running.gateway.reload();
    await expect
      .poll(() => restartWarnings(running))
      .toEqual(["[gateway] state.backend, state.redis_url changed: this takes effect after a restart"]);
  });
});

describe("SIGHUP reload without config.yaml", () => {
  it("is refused when the running config came from the file: its routes keep answering", async () => {
    gw = await startTestGateway({ config: webhookConfig(ROUTES) });
    rmSync(join(gw.home.dir, "config.yaml"));
    // Not the embedded default (no route of this file, the echo agent, no MCP server).
    expect(() => gw?.gateway.reload()).toThrow(
      /config\.yaml: not found — the running config came from this file: restore it and reload again/,
    );
    expect((await postJson(gw.url("/webhooks/r"), "{}")).status).toBe(202);
  });

  it("a config.yaml turned into a link to nothing is refused without advising to remove the link (which is refused too)", async () => {
    gw = await startTestGateway({ config: webhookConfig(ROUTES) });
    const file = join(gw.home.dir, "config.yaml");
    const gone = join(gw.home.dir, "dotfiles-moved-away", "config.yaml");
    rmSync(file);
    symlinkSync(gone, file);
    let refusal = "";
    try {
      gw.gateway.reload();
    } catch (err) {
      refusal = (err as Error).message;
    }
    expect(refusal).toBe(
      `${file}: is a symbolic link to ${gone}, which does not exist — the running config came from this file: restore its target or point the link at the file, and reload again`,
    );
    expect((await postJson(gw.url("/webhooks/r"), "{}")).status).toBe(202);
  });
});

describe("SIGHUP reload of an empty config.yaml", () => {
  it("is refused while the running config came from a file with settings (truncated by an editor mid-save)", async () => {
    gw = await startTestGateway({ config: webhookConfig(ROUTES) });
    const running = gw;
    for (const blank of ["", "\n# platforms:\n\n"]) {
      running.home.write("config.yaml", blank);
      expect(() => running.gateway.reload()).toThrow(
        /config\.yaml: is empty \(no setting in it\) — the running config came from this file: write it whole and reload again/,
      );
      expect((await postJson(running.url("/webhooks/r"), "{}")).status).toBe(202);
    }
    running.home.write("config.yaml", stringify(webhookConfig({ s: { secret: "INSECURE_NO_AUTH" } })));
    expect(running.gateway.reload().routes).toEqual(["s"]);
  });

  it("is applied when the running config.yaml was empty as well (the adapter on from WEBHOOK_ENABLED)", async () => {
    gw = await startTestGateway({ config: "", env: { WEBHOOK_ENABLED: "true" } });
    gw.home.write("config.yaml", "# still nothing\n");
    expect(gw.gateway.reload().routes).toEqual([]);
  });
});

describe("SIGHUP reload of settings left without effect", () => {
  it("logs the warnings a start logs for them (agent.command under the echo provider)", async () => {
    gw = await startTestGateway({ config: webhookConfig(ROUTES) });
    const running = gw;
    const config = webhookConfig(ROUTES, {}, { agent: { provider: "echo", command: ["/bin/agent"] } });
    running.home.write("config.yaml", stringify(config));
    running.gateway.reload();
    await expect
      .poll(() =>
        running
          .logs()
          .filter((l) => l.level === 40 && l.msg.startsWith("[agent]"))
          .map((l) => l.msg),
      )
      .toEqual([expect.stringContaining("agent.provider is echo, which does not use agent.command")]);
  });
});
