import { describe, type WrittenAs } from "../../config/describe.js";
import { givenBy, shownValue } from "../../config/givenValues.js";
import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget } from "./chat.js";
import { baseUrlOf, platformClient } from "./client.js";
import { homeChannelOf } from "./givenRecipient.js";
import { DeliveryError, type DeliveryTarget, type TargetDeps } from "./target.js";

/**
 * signal-cli-rest-api (github.com/bbernhard/signal-cli-rest-api): `POST /v2/send`.
 * Signal's inline message body holds 2 KiB of UTF-8 (longer texts travel as a long-text attachment, which
 * the REST API does not make): signal-cli cuts a longer body, and Signal's own apps drop a message whose
 * body is over 2048 bytes. Parts stay within 2000 UTF-8 bytes (about 660 CJK characters or 500 emoji).
 */
export const SIGNAL_LIMIT = 2000;

/**
 * signal-cli-rest-api answers a send that Signal's servers rate-limited with 429 and
 * `{"error", "challenge_tokens": [...], "account"}`: Signal wants a captcha solved for that account, which
 * no retry can do (and the message may have gone out even so, so a retry could send it twice). Such a 429
 * fails at once and says how to lift the limit; any other failure is passed on as it is.
 */
export function captchaRequired(
  err: unknown,
  number: string,
  /** config.yaml's text for `number` when a `${VAR}` gave it: named so, and no path is made from it. */
  given?: WrittenAs,
): unknown {
  if (!(err instanceof DeliveryError) || !err.transient) return err;
  const tokens = (err.answer as { challenge_tokens?: unknown } | undefined)?.challenge_tokens;
  if (!Array.isArray(tokens)) return err;
  const token = tokens.find((t): t is string => typeof t === "string" && t.trim() !== "");
  const account = given === undefined ? number : describe(given);
  const path = given === undefined ? encodeURIComponent(number) : "<number>";
  return new DeliveryError(
    `${err.message} — not retried: Signal asks for a captcha before ${account} sends more (the message may have been delivered anyway). Solve one at https://signalcaptchas.org/challenge/generate.html, then POST {"challenge_token": "${token ?? "<token>"}", "captcha": "<the signalcaptcha:// link>"} to /v1/accounts/${path}/rate-limit-challenge of the signal-cli REST API`,
    false,
    undefined,
    err.answer,
  );
}

export function signalTarget(settings: PlatformConfig<"signal">, deps: TargetDeps): DeliveryTarget {
  const number = settings.number ?? "";
  // A value a `${VAR}` gave is named as config.yaml writes it.
  const numberGiven = givenBy(settings, "number");
  const shownNumber = shownValue(settings, "number", number);
  const api = platformClient("signal", {
    ...baseUrlOf(settings),
    timeoutSeconds: settings.timeout_seconds,
    // `/v2/send` answers 201 with `{"timestamp": ...}`; older signal-cli-rest-api releases with no body.
    answers: "json or empty",
  });
  return chatTarget({
    name: "signal",
    sleep: deps.sleep,
    limit: SIGNAL_LIMIT,
    unit: "utf8",
    ...homeChannelOf(settings),
    async check(signal) {
      const answer = await api.call("list accounts", "GET", "/v1/accounts", { signal });
      const accounts = Array.isArray(answer.body) ? (answer.body as unknown[]) : [];
      if (!accounts.includes(number)) {
        throw new Error(
          `signal: account ${shownNumber} is not registered with the signal-cli REST API at ${shownValue(settings, "base_url", settings.base_url)} — register or link it first`,
        );
      }
      return shownNumber;
    },
    sendPart: ({ chatId, text, signal }) =>
      api
        .call("send", "POST", "/v2/send", { json: { message: text, number, recipients: [chatId] }, signal })
        .catch((err: unknown) => {
          throw captchaRequired(err, number, numberGiven);
        }),
  });
}
