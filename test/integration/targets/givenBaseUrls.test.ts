import { describe, expect, it } from "vitest";
import { createTargets } from "../../../src/io/targets/registry.js";
import type { DeliveryError, DeliveryMessage } from "../../../src/io/targets/target.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { closedPort } from "../../helpers/closedPort.js";
import { configHomes } from "../../helpers/configHome.js";

const NOT_SHOWN = "(the value it gives is not shown)";
const v = (name: string) => `$\{${name}}`;
const hostOf = (written: string) => `<the host of "${written}" ${NOT_SHOWN}>`;

/**
 * docs/configuration.md, "What a variable gives is never quoted back", for where a delivery connects: a
 * platform's `base_url` or e-mail's `host` a `${VAR}` gave, nothing answering there, was quoted by its host in
 * the system's words and the hint made from them (`nothing listens on port N of 127.0.0.1`, `the host name
 * secretv-host.invalid is not known (DNS)`) in each failed delivery and the start's check. It is named as
 * config.yaml writes it. Each value below holds 127.0.0.1 (nothing listens on its port) or a secretv host.
 */
const homes = configHomes();

const MESSAGE: DeliveryMessage = {
  text: "hi",
  extra: {},
  written: {},
  route: "r",
  deliveryId: "d1",
  profile: undefined,
};

const failure = (promise: Promise<unknown> | undefined) =>
  (promise ?? Promise.resolve()).then(
    () => {
      throw new Error("the delivery succeeded");
    },
    (err: unknown) => (err as DeliveryError).message,
  );

describe(`a base_url or SMTP host a $\{VAR} gave, nothing answering there`, () => {
  it("platforms over HTTP: a refused connection and an unknown host name the base as the file writes it", async () => {
    const port = await closedPort();
    const { config } = homes.loaded(
      [
        "platforms:",
        `  telegram: {enabled: true, token: "1:T", base_url: "${v("TG_URL")}", home_channel: "1"}`,
        `  slack: {enabled: true, token: xoxb-1, base_url: "${v("SLACK_URL")}", home_channel: C1}`,
        `  mattermost: {enabled: true, token: t, base_url: "http://${v("MM_HOST")}:${port}", home_channel: c}`,
        `  sms: {enabled: true, account_sid: AC1, auth_token: t, from: "+15550001111", base_url: "https://${v("SMS_HOST")}", home_channel: "+15550002222"}`,
        `  wecom: {enabled: true, corp_id: ww1, corp_secret: WC, agent_id: 1000002, base_url: "${v("WECOM_URL")}", home_channel: u}`,
        "",
      ].join("\n"),
      [
        `TG_URL=http://127.0.0.1:${port}/secretv-path`,
        "SLACK_URL=http://secretv-host.invalid",
        "MM_HOST=127.0.0.1",
        "SMS_HOST=secretv-sms.invalid",
        `WECOM_URL=http://127.0.0.1:${port}`,
        "",
      ].join("\n"),
    );
    const targets = createTargets(config, { logger: captureLogger().logger });
    const errors = {
      telegram: await failure(targets.get("telegram")?.send(MESSAGE)),
      telegramCheck: await failure(targets.get("telegram")?.check?.()),
      slack: await failure(targets.get("slack")?.send(MESSAGE)),
      mattermost: await failure(targets.get("mattermost")?.send(MESSAGE)),
      sms: await failure(targets.get("sms")?.send(MESSAGE)),
      wecom: await failure(targets.get("wecom")?.send(MESSAGE)),
    };
    expect(errors).toEqual({
      telegram: `telegram: sendMessage: connection failed (ECONNREFUSED) — nothing listens on port ${port} of ${hostOf(v("TG_URL"))}: start the server there, or check platforms.telegram.base_url`,
      telegramCheck: `telegram: getMe: connection failed (ECONNREFUSED) — nothing listens on port ${port} of ${hostOf(v("TG_URL"))}: start the server there, or check platforms.telegram.base_url`,
      slack: `slack: chat.postMessage: connection failed (ENOTFOUND) — the host name ${hostOf(v("SLACK_URL"))} is not known (DNS): check the host in platforms.slack.base_url`,
      mattermost: `mattermost: create post: connection failed (ECONNREFUSED) — nothing listens on port ${port} of ${hostOf(`http://${v("MM_HOST")}:${port}`)}: start the server there, or check platforms.mattermost.base_url`,
      sms: `sms: create message: connection failed (ENOTFOUND) — the host name ${hostOf(`https://${v("SMS_HOST")}`)} is not known (DNS): check the host in platforms.sms.base_url`,
      wecom: expect.stringContaining(`nothing listens on port ${port} of ${hostOf(v("WECOM_URL"))}`),
    });
    expect(Object.values(errors).join("\n")).not.toMatch(/secretv|127\.0\.0\.1/i);
  });

  it("email: a refused connection and an unknown host name platforms.email.host as the file writes it", async () => {
    const port = await closedPort();
    const written = `"${v("SMTP_HOST")}" ${NOT_SHOWN}`;
    const email = (dotenv: string) => {
      const { config } = homes.loaded(
        [
          "platforms:",
          `  email: {enabled: true, host: "${v("SMTP_HOST")}", port: ${port}, secure: false, from: svc@example.org, home_channel: a@example.org}`,
          "",
        ].join("\n"),
        dotenv,
      );
      return createTargets(config, { logger: captureLogger().logger }).get("email");
    };
    const refused = email("SMTP_HOST=127.0.0.1\n");
    const errors = [
      await failure(refused?.send(MESSAGE)),
      await failure(refused?.check?.()),
      await failure(email("SMTP_HOST=secretv-mail.invalid\n")?.send(MESSAGE)),
    ];
    const nothingListens = `email: ESOCKET — connect ECONNREFUSED ${written}:${port} — nothing listens on port ${port} of ${written}: start the SMTP server there, or check platforms.email.host and platforms.email.port`;
    expect(errors).toEqual([
      nothingListens,
      nothingListens,
      `email: EDNS — getaddrinfo ENOTFOUND ${written} — the host name ${written} is not known (DNS): check platforms.email.host`,
    ]);
    expect(errors.join("\n")).not.toMatch(/secretv|127\.0\.0\.1/i);
  });
});
