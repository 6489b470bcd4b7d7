import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoadedConfig } from "../../../src/config/load.js";
import type { Route } from "../../../src/config/sections/webhook.js";
import { createTargets } from "../../../src/io/targets/registry.js";
import type { DeliveryError, DeliveryMessage } from "../../../src/io/targets/target.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { configHomes } from "../../helpers/configHome.js";

const NOT_SHOWN = "(the value it gives is not shown)";
const v = (name: string) => `$\{${name}}`;
const quoted = (name: string) => `"${v(name)}" ${NOT_SHOWN}`;

/**
 * docs/configuration.md, "What a variable gives is never quoted back", at delivery: a chat, thread or
 * recipient a `${VAR}` gave (a route's `deliver_extra`, a platform's `home_channel`), and a platform
 * setting a delivery names (signal's number and base_url, forge_comment's command), are named as config.yaml
 * writes them in the warnings and failures of a delivery. Each value below holds 7070 or SECRET.
 */
let telegram: FakeApi;
let mattermost: FakeApi;
let wecom: FakeApi;
let signal: FakeApi;
beforeAll(async () => {
  telegram = await startFakeTelegram({ migrated: { "-7070": -1009990001 }, deletedTopics: [7071] });
  mattermost = await startFakeApi((r) =>
    (r.json as { root_id?: string } | undefined)?.root_id === "SECRET-root"
      ? {
          status: 400,
          json: { id: "api.post.create_post.root_id.app_error", message: "Invalid RootId parameter." },
        }
      : { status: 201, json: { id: "p1" } },
  );
  wecom = await startFakeApi((r) =>
    r.path === "/cgi-bin/gettoken"
      ? { json: { errcode: 0, access_token: "WC-ACCESS", expires_in: 7200 } }
      : { json: { errcode: 0, errmsg: "ok", invaliduser: "SECRETbob", msgid: "m1" } },
  );
  signal = await startFakeApi((r) =>
    r.path.endsWith("/v1/accounts")
      ? { json: [] }
      : {
          status: 429,
          json: { error: "Failed to send message due to rate limiting.", challenge_tokens: ["tok-1"] },
        },
  );
});
afterAll(async () => {
  await Promise.all([telegram.close(), mattermost.close(), wecom.close(), signal.close()]);
});

const homes = configHomes();
const loaded = homes.loaded;

/** A delivery of route `name` of `config`, its `deliver_extra` rendered as written (no template in it). */
function messageOf(config: LoadedConfig["config"], name: string): DeliveryMessage {
  const route = config.platforms.webhook.routes[name] as Route;
  const written = route.deliver_extra ?? {};
  const extra = Object.fromEntries(Object.entries(written).map(([key, value]) => [key, String(value)]));
  return { text: "hi", extra, written, route: name, deliveryId: "d1", profile: undefined };
}

const failure = (promise: Promise<unknown> | undefined) =>
  (promise ?? Promise.resolve()).then(
    () => {
      throw new Error("the delivery succeeded");
    },
    (err: unknown) => err as DeliveryError,
  );

describe(`a recipient or setting a $\{VAR} gave, at delivery`, () => {
  it("telegram, mattermost, wecom: the warnings name the chat, thread and list as the file writes them", async () => {
    const { config } = loaded(
      [
        "platforms:",
        `  telegram: {enabled: true, token: "1:T", base_url: "${telegram.url}", home_channel: "${v("HOME")}"}`,
        `  mattermost: {enabled: true, token: MM, base_url: "${mattermost.url}", home_channel: "${v("TOWN")}"}`,
        `  wecom: {enabled: true, corp_id: ww1, corp_secret: WC, agent_id: 1000002, base_url: "${wecom.url}"}`,
        "  webhook:",
        "    routes:",
        `      moved: {secret: s3cret-s3cret, deliver: telegram, deliver_extra: {chat_id: "${v("CHAT")}"}}`,
        `      topic: {secret: s3cret-s3cret, deliver: telegram, deliver_extra: {message_thread_id: "${v("TOPIC")}"}}`,
        `      thread: {secret: s3cret-s3cret, deliver: mattermost, deliver_extra: {thread_id: "${v("ROOT")}"}}`,
        `      list: {secret: s3cret-s3cret, deliver: wecom, deliver_extra: {chat_id: "${v("LIST")}"}}`,
        "",
      ].join("\n"),
      "CHAT=-7070\nHOME=-70707\nTOPIC=7071\nTOWN=SECRET-town\nROOT=SECRET-root\nLIST=SECRETalice|SECRETbob\n",
    );
    const log = captureLogger();
    const targets = createTargets(config, { logger: log.logger });
    await targets.get("telegram")?.send(messageOf(config, "moved"));
    await targets.get("telegram")?.send(messageOf(config, "topic"));
    await targets.get("mattermost")?.send(messageOf(config, "thread"));
    await targets.get("wecom")?.send(messageOf(config, "list"));
    expect(log.messages()).toEqual([
      `[delivery] telegram: chat ${quoted("CHAT")} was upgraded to supergroup -1009990001; delivering there — set deliver_extra.chat_id or platforms.telegram.home_channel to -1009990001`,
      `[delivery] telegram: topic ${quoted("TOPIC")} of chat ${quoted("HOME")} was not found (deleted, or topics turned off); delivering to the chat itself (its General topic) — fix deliver_extra.message_thread_id (or thread_id) of route "topic"`,
      `[delivery] mattermost: thread ${quoted("ROOT")} was not found in channel ${quoted("TOWN")} (its first post deleted, or another channel's); posting to the channel itself — fix deliver_extra.thread_id (or message_thread_id) of route "thread"`,
      `[delivery] wecom: route "list": not delivered to 1 of its recipients (unknown, outside the app's visible range, or unlicensed) — the other recipients of ${quoted("LIST")} got it`,
    ]);
    expect(log.lines().join("\n")).not.toMatch(/7070|SECRET/);
  });

  it("a chat the platform refuses, a qqbot chat id and an e-mail recipient that name none, forge_comment's repo, pr_number and command", async () => {
    const { config } = loaded(
      [
        "platforms:",
        `  telegram: {enabled: true, token: "1:T", base_url: "${telegram.url}", home_channel: "${v("HOME")}"}`,
        `  qqbot: {enabled: true, app_id: "1", client_secret: c, home_channel: "${v("QQ")}"}`,
        `  email: {enabled: true, host: 127.0.0.1, port: 1, secure: false, from: svc@example.org, home_channel: "${v("MAILTO")}"}`,
        `  forge_comment: {enabled: true, command: "${v("GH")}"}`,
        "  webhook:",
        "    routes:",
        `      repo: {secret: s3cret-s3cret, deliver: forge_comment, deliver_extra: {repo: "${v("REPO")}", pr_number: "1"}}`,
        `      pr: {secret: s3cret-s3cret, deliver: forge_comment, deliver_extra: {repo: o/r, pr_number: "${v("PR")}"}}`,
        "      gh: {secret: s3cret-s3cret, deliver: forge_comment, deliver_extra: {repo: o/r, pr_number: '1'}}",
        "      home: {secret: s3cret-s3cret, deliver: telegram}",
        "",
      ].join("\n"),
      "HOME=-70707\nQQ=group:\nMAILTO=SECRET-oncall\nGH=SECRET-gh-7070\nREPO=SECRET\nPR=70707070707\n",
    );
    const targets = createTargets(config, {
      logger: captureLogger().logger,
      env: { PATH: "/nonexistent" },
    });
    telegram.enqueue({
      status: 400,
      json: { ok: false, error_code: 400, description: "Bad Request: chat not found" },
    });
    const errors = [
      await failure(targets.get("telegram")?.send(messageOf(config, "home"))),
      await failure(targets.get("qqbot")?.send(messageOf(config, "home"))),
      await failure(targets.get("email")?.send(messageOf(config, "home"))),
      await failure(targets.get("forge_comment")?.send(messageOf(config, "repo"))),
      await failure(targets.get("forge_comment")?.send(messageOf(config, "pr"))),
      await failure(targets.get("forge_comment")?.send(messageOf(config, "gh"))),
    ].map((err) => err.message);
    expect(errors.join("\n")).not.toMatch(/7070|SECRET/);
    expect(errors).toEqual([
      `telegram: sendMessage: HTTP 400 — Bad Request: chat not found — check chat ${quoted("HOME")}, from platforms.telegram.home_channel`,
      `qqbot: chat id ${quoted("QQ")} has no id after "group:" — the message is not sent; write group:<group_openid>`,
      `email: route "home": the recipient ${quoted("MAILTO")} is no e-mail address — nothing sent`,
      `forge_comment: route "repo": deliver_extra.repo must be owner/name (or host/owner/name for GitHub Enterprise Server), got ${quoted("REPO")}`,
      `forge_comment: route "pr": deliver_extra.pr_number must be a positive integer, got ${quoted("PR")}`,
      `forge_comment: ${quoted("GH")} was not found on PATH — install the GitHub CLI and run "gh auth login"`,
    ]);
  });

  it("a platform written under an alias (chat_1, github_comment) has its values named so too", async () => {
    const { config } = loaded(
      [
        "platforms:",
        `  chat_1: {enabled: true, token: "1:${v("TGTOK")}", base_url: "${telegram.url}", home_channel: "${v("HOME")}"}`,
        `  github_comment: {enabled: true, command: "${v("GH")}"}`,
        "  webhook:",
        "    routes:",
        "      home: {secret: s3cret-s3cret, deliver: chat_1}",
        "      gh: {secret: s3cret-s3cret, deliver: github_comment, deliver_extra: {repo: o/r, pr_number: '1'}}",
        "",
      ].join("\n"),
      "TGTOK=SECRET-token\nHOME=-70707\nGH=SECRET-gh-7070\n",
    );
    const targets = createTargets(config, {
      logger: captureLogger().logger,
      env: { PATH: "/nonexistent" },
    });
    telegram.enqueue({
      status: 400,
      json: { ok: false, error_code: 400, description: "Bad Request: chat not found" },
    });
    const errors = [
      await failure(targets.get("telegram")?.send(messageOf(config, "home"))),
      await failure(targets.get("forge_comment")?.send(messageOf(config, "gh"))),
    ].map((err) => err.message);
    expect(errors.join("\n")).not.toMatch(/7070|SECRET/);
    expect(errors).toEqual([
      `telegram: sendMessage: HTTP 400 — Bad Request: chat not found — check chat ${quoted("HOME")}, from platforms.telegram.home_channel`,
      `forge_comment: ${quoted("GH")} was not found on PATH — install the GitHub CLI and run "gh auth login"`,
    ]);
  });

  it("signal: its number and base_url in the check, and the captcha's advice", async () => {
    const { config } = loaded(
      [
        "platforms:",
        `  signal: {enabled: true, number: "${v("NUMBER")}", base_url: "${v("SIGNAL_URL")}"}`,
        "  webhook:",
        "    routes:",
        "      s: {secret: s3cret-s3cret, deliver: signal, deliver_extra: {chat_id: '+15550002222'}}",
        "",
      ].join("\n"),
      `NUMBER=+1555SECRET7070\nSIGNAL_URL=${signal.url}/SECRET\n`,
    );
    const target = createTargets(config, { logger: captureLogger().logger }).get("signal");
    const check = await failure(target?.check?.());
    const send = await failure(target?.send(messageOf(config, "s")));
    expect(`${check.message}\n${send.message}`).not.toMatch(/7070|SECRET/);
    expect(check.message).toBe(
      `signal: account ${quoted("NUMBER")} is not registered with the signal-cli REST API at ${quoted("SIGNAL_URL")} — register or link it first`,
    );
    expect(send.message).toContain(
      `— not retried: Signal asks for a captcha before ${quoted("NUMBER")} sends more (the message may have been delivered anyway).`,
    );
    expect(send.message).toContain(
      "to /v1/accounts/<number>/rate-limit-challenge of the signal-cli REST API",
    );
    // Registered: the check names the account it connected as so too.
    signal.enqueue({ json: ["+1555SECRET7070"] });
    await expect(target?.check?.()).resolves.toBe(quoted("NUMBER"));
  });

  it("qqbot: the app it connected as", async () => {
    const qq = await startFakeApi(() => ({ json: { access_token: "QQ-ACCESS", expires_in: 7200 } }));
    try {
      const { config } = loaded(
        `platforms:\n  qqbot: {enabled: true, app_id: "${v("QQ_APP")}", client_secret: c, token_url: "${qq.url}/token"}\n`,
        "QQ_APP=SECRET-7070\n",
      );
      const target = createTargets(config, { logger: captureLogger().logger }).get("qqbot");
      await expect(target?.check?.()).resolves.toBe(quoted("QQ_APP"));
    } finally {
      await qq.close();
    }
  });
});
