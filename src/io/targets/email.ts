import { createHash } from "node:crypto";
import type { Transporter } from "nodemailer";
import { timeoutSignal } from "../../clock.js";
import { hostAloneAsWritten, withHostAsWritten } from "../../config/givenUrl.js";
import { givenBy, shownValue } from "../../config/givenValues.js";
import { bindHost, isLoopbackHost } from "../../config/host.js";
import type { PlatformConfig } from "../../config/sections/platforms.js";
import { MAX_TIMER_MS } from "../../config/timerSeconds.js";
import { cutText } from "../cutText.js";
import { UNKNOWN_HOST } from "../outbound/unreachable.js";
import {
  partKey,
  partlyUnfilled,
  resolveChatId,
  routeRecipient,
  unfilledValue,
  unresolvedRecipient,
} from "./chat.js";
import { addressesOf, namesNoAddress, namesSeveralRecipients } from "./emailRecipients.js";
import { writtenDomainProblem } from "./emailWrittenDomain.js";
import { homeChannelOf, shownRecipient } from "./givenRecipient.js";
import { quoted } from "./httpJson.js";
import { smtpHidden } from "./smtpHidden.js";
import { wellFormed } from "./split.js";
import {
  DeliveryError,
  type DeliveryMessage,
  type DeliveryTarget,
  RecipientsRefusedForNow,
  runOnce,
  type TargetDeps,
} from "./target.js";

const TRANSIENT_CODES = new Set(["ECONNECTION", "ESOCKET", "ETIMEDOUT", "EDNS"]);
/**
 * Node's codes for a TLS certificate it does not trust (expired, self-signed, from an unknown CA, for
 * another name), which nodemailer keeps as `originalCode` under its own ESOCKET.
 */
const UNTRUSTED_CERTIFICATE =
  /^(?:CERT_\w+|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_\w+|ERR_TLS_CERT_ALTNAME_INVALID)$/;
/** C0 and C1 controls and the Unicode line and paragraph separators, which nodemailer's parser reads as spaces. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
/** The line breaks besides CR and LF (NEL, U+2028, U+2029), which nodemailer does not make spaces in a subject. */
const OTHER_LINE_BREAKS = /[\u0085\u2028\u2029]/g;

/**
 * How a failure says what nodemailer and the server said: `shown` names `platforms.email.host` as config.yaml
 * writes it where the words put a host (`hostAsWritten`), then `hidden` takes out the password and what `.env`
 * gave the settings (`smtpHidden`), which `shown` names first where it knows their place. svc's own words
 * around them are neither.
 */
interface SmtpWords {
  /** The host, in a text of the system's words. */
  readonly shown: (text: string) => string;
  /** A host the system's words name, taken out of them. */
  readonly host: (host: string) => string;
  readonly hidden: (text: string) => string;
}

/**
 * `platforms.email.host` named as config.yaml writes it when a `${VAR}` gave it (its value, and the name the
 * connect used for it: `smtpOptions`), in a text and alone, else as it is.
 */
function hostAsWritten(settings: PlatformConfig<"email">): Pick<SmtpWords, "shown" | "host"> {
  const given = givenBy(settings, "host");
  if (given === undefined || settings.host === undefined)
    return { shown: (text) => text, host: (host) => host };
  const hosts = [settings.host, String(smtpOptions(settings).host)];
  return {
    shown: (text) => withHostAsWritten(text, hosts, given),
    host: (host) => hostAloneAsWritten(host, hosts, given),
  };
}

/** nodemailer's failure as a delivery's: its words, and the hint made from them, said as `words` say. */
function smtpFailure(
  err: unknown,
  words: SmtpWords,
  /** The connection started in plain text (`secure` false): a silent server may be one that expects TLS. */
  plain: boolean,
): DeliveryError {
  const e = err as {
    code?: string;
    originalCode?: string;
    responseCode?: number;
    response?: string;
    message?: string;
  };
  const transient =
    (e.responseCode !== undefined && e.responseCode >= 400 && e.responseCode < 500) ||
    TRANSIENT_CODES.has(e.code ?? "");
  // On one line and cut, as every platform's error: a server's multi-line reply (Gmail's 535-5.7.8 ...
  // 535 5.7.8 <link>) comes joined by line breaks.
  const detail = quoted(words.hidden(words.shown(e.response ?? e.message ?? String(err))), []);
  if (e.code === "ETLS" && e.response !== undefined) {
    // requireTLS (smtpOptions) met a server that refused STARTTLS: no login was sent.
    return new DeliveryError(
      `email: the server offers no STARTTLS (${detail}) — svc does not send the login in clear to a server off this machine; use its TLS port with secure: true, or a server that offers STARTTLS`,
      false,
    );
  }
  if (e.originalCode === "ERR_SSL_WRONG_VERSION_NUMBER") {
    // secure: true (implicit TLS) met a server that greets in plain text: a STARTTLS port such as 587.
    return new DeliveryError(
      "email: the server answered in plain text where secure: true expects TLS from the start — not retried; a server on a STARTTLS port (587, 25) takes secure: false (secure: true is for port 465)",
      false,
    );
  }
  if (UNTRUSTED_CERTIFICATE.test(e.originalCode ?? "")) {
    // Not a connection that failed for now: every attempt would meet the same certificate.
    return new DeliveryError(
      `email: the server's TLS certificate is not trusted (${e.originalCode}: ${detail}) — not retried; check that host is the name the certificate was issued for, and that the certificate is valid`,
      false,
    );
  }
  // An SMTPS server (implicit TLS, port 465) waits for a TLS handshake and sends a plain client nothing.
  const hint =
    plain && e.code === "ETIMEDOUT" && /Greeting never received/i.test(e.message ?? "")
      ? " — a server that expects TLS from the start (SMTPS, usually port 465) greets no plain-text client: if this is one, set secure: true"
      : "";
  // A 5xx refusal of the login (535 5.7.8 bad credentials) is the settings', whose words may not say which
  // (a 454 "try again later" is the server's, retried).
  const loginRefused =
    e.code === "EAUTH" && e.responseCode !== undefined && e.responseCode >= 500
      ? " — the server refused the login: check platforms.email.user and platforms.email.password"
      : "";
  return new DeliveryError(
    `email: ${e.code ?? "SMTP"} — ${detail}${hint}${loginRefused}${unreachableSmtp(e.message ?? "", (piece) => words.hidden(words.host(piece)))}`,
    transient,
  );
}

/**
 * Where nothing could be connected to, said with what to check, as a platform's base_url is: nodemailer
 * says only `connect ECONNREFUSED 127.0.0.1:2525` (no server started there, the wrong port) or
 * `getaddrinfo ENOTFOUND smtp.exmaple.com` (a misspelt host). The host and port it quotes of `text` are said
 * through `quote`; the rest is svc's own words.
 */
function unreachableSmtp(text: string, quote: (piece: string) => string): string {
  const refused = /\bconnect ECONNREFUSED (\S+):(\d+)\b/.exec(text);
  if (refused !== null)
    return ` — nothing listens on port ${quote(refused[2] ?? "")} of ${quote(refused[1] ?? "")}: start the SMTP server there, or check platforms.email.host and platforms.email.port`;
  const unknown = UNKNOWN_HOST.exec(text);
  if (unknown !== null)
    return ` — the host name ${quote(unknown[1] ?? "")} is not known (DNS): check platforms.email.host`;
  return "";
}

/** Why a recipient missed a mail whose last attempt for it the gateway's stop cut short. */
const CUT_BY_STOP = "the last attempt was cut short by the gateway's stop; the server may have taken it";

/**
 * `sending` within `ms` in all, and no longer than `signal` (a stop) lets it: nodemailer's timeouts are
 * each an idle timer, so a server that answers a byte a second after DATA kept a delivery for ever, and a
 * stop waited on it. The mail may still be taken after the deadline; its retry has the same Message-ID.
 */
async function withinDeadline<T>(
  sending: Promise<T>,
  ms: number,
  seconds: number,
  signal?: AbortSignal,
): Promise<T> {
  const deadline = timeoutSignal(ms);
  const ended = signal === undefined ? deadline : AbortSignal.any([signal, deadline]);
  let onEnd: (() => void) | undefined;
  const abandoned = new Promise<never>((_resolve, reject) => {
    onEnd = () =>
      reject(
        signal?.aborted === true
          ? signal.reason
          : new DeliveryError(
              `email: the SMTP server did not finish taking the mail within timeout_seconds (${seconds}s)`,
              true,
            ),
      );
    if (ended.aborted) onEnd();
    else ended.addEventListener("abort", onEnd, { once: true });
  });
  // Its failure after the deadline is nobody's to hear.
  sending.catch(() => undefined);
  try {
    return await Promise.race([sending, abandoned]);
  } finally {
    if (onEnd !== undefined) ended.removeEventListener("abort", onEnd);
  }
}

/** SMTP through nodemailer; the recipient is `deliver_extra.chat_id` or `to`, else `home_channel`. */
/**
 * nodemailer's SMTP options. Port 465 is SMTPS (implicit TLS, RFC 8314): without `secure` set, a
 * connection there would wait for a plain-text greeting that never comes until the timeout.
 */
export function smtpOptions(settings: PlatformConfig<"email">) {
  const timeoutMs = settings.timeout_seconds * 1000;
  const secure = settings.secure ?? settings.port === 465;
  const host = bindHost(settings.host ?? "");
  const onThisMachine = "host" in host && isLoopbackHost(host.host);
  return {
    // The address itself: `[::1]`, bracketed as URLs write an IPv6 address, is no name to look up.
    host: "host" in host ? host.host : settings.host,
    port: settings.port,
    secure,
    ...(settings.user === undefined ? {} : { auth: { user: settings.user, pass: settings.password ?? "" } }),
    // A login never crosses the network in clear: a server off this machine that offers no STARTTLS (or
    // an attacker on the path who strips the offer) fails the delivery instead of receiving the password.
    ...(settings.user !== undefined && !secure && !onThisMachine ? { requireTLS: true } : {}),
    // A relay on this machine (a distribution's Postfix, which offers STARTTLS with its self-signed
    // "snakeoil" certificate) is taken at its certificate: the mail never crosses a network, and checking
    // it would fail every delivery. A server off this machine is verified as always.
    ...(onThisMachine ? { tls: { rejectUnauthorized: false } } : {}),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    // A second later than the greeting's: a server that sends nothing at all (an SMTPS port spoken to in
    // plain text) is then named by the greeting that never came, not by an idle socket's bare "Timeout".
    // Within the longest a timer holds (2^31-1 ms): past it Node warns (TimeoutOverflowWarning) on each connect.
    socketTimeout: Math.min(timeoutMs + 1000, MAX_TIMER_MS),
  };
}

/**
 * The Message-ID of a delivery's mail, the same on every attempt: a mail whose answer was lost (a timeout
 * after the server took the message) and is sent again is then one message to the receiving mailbox,
 * which shows a Message-ID once. Its domain is the sender's, as nodemailer's own ids have.
 */
export function messageIdFor(message: DeliveryMessage, from: string | undefined): string {
  const address = /<([^<>]*)>\s*$/.exec(from ?? "")?.[1] ?? from ?? "";
  const domain = address.includes("@") ? address.slice(address.lastIndexOf("@") + 1).trim() : "";
  const id = createHash("sha256").update(partKey(message, 0)).digest("hex").slice(0, 32);
  return `<svc-${id}@${/^[\w.-]+$/.test(domain) ? domain : "localhost"}>`;
}

/**
 * RFC 5322 caps a mail's lines at 998 characters, and nodemailer folds a subject only at its spaces: a
 * longer run without one (payload text: a hash, a URL) would make a header line servers may refuse (Exim's
 * "lines too long"). A subject is a summary: one past this many characters is cut, ending in "…".
 */
const MAX_SUBJECT = 900;

function subjectLine(written: string): string {
  const subject = written.replace(OTHER_LINE_BREAKS, " ");
  if (subject.length <= MAX_SUBJECT) return subject;
  const end = MAX_SUBJECT - 1;
  // Never between the two halves of a surrogate pair.
  const cut = /[\ud800-\udbff]/.test(subject[end - 1] ?? "") ? end - 1 : end;
  return `${subject.slice(0, cut)}…`;
}

/** A recipient the server refused at `RCPT TO` while it took the message for others (nodemailer's `rejectedErrors`). */
interface RefusedRecipient {
  readonly recipient: string;
  readonly responseCode?: number;
  readonly response?: string;
}

function refusedRecipients(info: unknown): RefusedRecipient[] {
  const errors = (info as { rejectedErrors?: unknown } | undefined)?.rejectedErrors;
  return Array.isArray(errors)
    ? (errors as RefusedRecipient[]).filter((e) => typeof e?.recipient === "string")
    : [];
}

/**
 * The recipients a handed-on mail retries (`SendOptions.recipients`), when each is still one `to` names:
 * else (the list changed since) undefined, and the mail goes to all of `to` as a fresh one.
 */
function stillNamed(recipients: readonly string[] | undefined, to: string): string[] | undefined {
  if (recipients === undefined || recipients.length === 0) return undefined;
  const named = new Set(addressesOf(to).map((address) => address.toLowerCase()));
  return recipients.every((recipient) => named.has(recipient.toLowerCase())) ? [...recipients] : undefined;
}

/** A server's reply as a log line quotes it: `hidden` (without credentials), on one line, at most 200 characters. */
const oneLine = (reply: string, hidden: (text: string) => string) =>
  cutText(hidden(reply).replace(/\s+/g, " ").trim(), 200);

/** A 4xx reply: the server may take the message for that recipient later. */
const temporary = (refused: RefusedRecipient) =>
  refused.responseCode !== undefined && refused.responseCode >= 400 && refused.responseCode < 500;

export function emailTarget(settings: PlatformConfig<"email">, deps: TargetDeps): DeliveryTarget {
  // The password's forms, and what `.env` gave a setting (the host, the user, a recipient list): nodemailer's
  // words and a server's replies may quote them where no hint names them as written.
  const hidden = smtpHidden(settings);
  // The whole mail's time: the connect's and the greeting's own timeouts (timeout_seconds each) say which
  // step did not answer, so the deadline comes a little after them.
  const deadlineMs = Math.min(settings.timeout_seconds * 1000 + 2000, MAX_TIMER_MS);
  const plain = !smtpOptions(settings).secure;
  const words: SmtpWords = { ...hostAsWritten(settings), hidden };
  // `from: svc`, a name alone: nodemailer would send with no From header and a null sender (MAIL FROM:<>),
  // which a server may take while the receiving mailbox refuses or drops the mail, unseen.
  const fromProblem = namesNoAddress(settings.from ?? "")
    ? new DeliveryError(
        `email: platforms.email.from ${shownValue(settings, "from", settings.from ?? "", (from) => `"${cutText(from, 100)}"`)} names no e-mail address — nothing sent (a mail without a From address is refused or dropped by the receiving mailbox); write it as svc@example.com or "svc <svc@example.com>"`,
        false,
      )
    : undefined;
  // nodemailer is loaded when the target first checks or sends, not at every gateway start.
  let transporter: Promise<Transporter> | undefined;
  const transport = (): Promise<Transporter> =>
    (transporter ??= import("nodemailer").then((m) => m.default.createTransport(smtpOptions(settings))));
  return {
    name: "email",
    async check() {
      if (fromProblem !== undefined) throw fromProblem;
      try {
        await (await transport()).verify();
      } catch (err) {
        throw smtpFailure(err, words, plain);
      }
      return `${settings.host === undefined ? settings.host : shownValue(settings, "host", settings.host)}:${settings.port}`;
    },
    async send(message, signal, options = {}) {
      if (fromProblem !== undefined) throw fromProblem;
      const to = resolveChatId("email", message, settings.home_channel, ["chat_id", "to"]);
      // A recipient rendered from the payload is untrusted: nodemailer reads "a@x\r\nBcc: b@y" as a
      // group and sends to b@y as well.
      if (CONTROL.test(to)) {
        throw new DeliveryError(
          `email: route "${message.route}": the recipient contains a line break or control character — refused`,
          false,
        );
      }
      // `{user.login}@example.com` for an event without the field looks like an address: no mail goes to it.
      const key = ["chat_id", "to"].find((name) => message.extra[name] !== undefined);
      const why = key === undefined ? undefined : partlyUnfilled(message, key, to);
      if (key !== undefined && why !== undefined)
        throw unresolvedRecipient("email", message, key, why, "address");
      // Text with no address in it (an unfilled `{user.email}`): nodemailer would only say "No recipients defined".
      if (namesNoAddress(to)) {
        throw new DeliveryError(
          `email: route "${message.route}": the recipient ${shownRecipient(to, message, ["chat_id", "to"], homeChannelOf(settings), (id) => `"${cutText(id, 100)}"`)} is no e-mail address${unfilledValue(message, key, to) ? " (a template the event did not fill)" : ""} — nothing sent`,
          false,
        );
      }
      // Nor may it add recipients: "a@x, b@y", "a@x; b@y" or a group "list: b@y, c@y;" would go to each.
      if (routeRecipient("email", message, ["chat_id", "to"]) !== undefined && namesSeveralRecipients(to)) {
        throw new DeliveryError(
          `email: route "${message.route}": deliver_extra names more than one recipient — refused (one address per delivery; a list belongs in platforms.email.home_channel)`,
          false,
        );
      }
      // Nor take it to another domain than the one the route writes (`{user.login}@example.com`).
      const outside = key === undefined ? undefined : writtenDomainProblem(key, message.written?.[key], to);
      if (outside !== undefined)
        throw new DeliveryError(`email: route "${message.route}": ${outside}`, false);
      // A mail holds no NUL (RFC 5322), and half of an emoji is no text: both as U+FFFD, as chat targets send them.
      const subject = subjectLine(
        wellFormed(message.extra.subject?.trim() || settings.subject.replaceAll("{route}", message.route)),
      );
      const messageId = messageIdFor(message, settings.from);
      // A server that refuses some recipients of a list (home_channel) at RCPT TO takes the mail for the
      // others, and nodemailer resolves: those refused for now (4xx) are sent it again, alone (the same
      // mail: its headers and Message-ID unchanged); the delivery counts as sent once anyone got it, and
      // a warning names who did not.
      // Handed on by another instance that mailed the others: the recipients it was to retry. Until one of
      // them gets it here, each missed it, as a retry on that instance would have left them.
      let envelopeTo = stillNamed(options.recipients, to);
      /** Recipients refused so far, with the server's reply (as a log line quotes it: `oneLine`), or svc's words. */
      const unreached = new Map<string, string>(
        (envelopeTo ?? []).map((recipient) => [recipient, "refused for now on an earlier attempt"]),
      );
      /** Why the last attempt failed, when the server gave no reply to name. */
      let lastFailure: string | undefined;
      try {
        await (options.runStep ?? runOnce)(async () => {
          let info: unknown;
          try {
            const sending = (await transport()).sendMail({
              from: settings.from,
              to,
              subject,
              text: wellFormed(message.text),
              messageId,
              // RFC 3834: sent by a program, so vacation and other auto-replies do not answer it.
              headers: { "Auto-Submitted": "auto-generated" },
              ...(envelopeTo === undefined ? {} : { envelope: { from: settings.from, to: envelopeTo } }),
            });
            info = await withinDeadline(sending, deadlineMs, settings.timeout_seconds, signal);
          } catch (err) {
            // A retry for the recipients refused for now, refused again: its reply is the one to name.
            const reply = (err as { response?: unknown }).response;
            if (envelopeTo !== undefined && typeof reply === "string")
              for (const recipient of envelopeTo) unreached.set(recipient, oneLine(reply, hidden));
            // The stop's reason as it is. A retry it cut short while under way is why its recipients missed
            // the mail, not the server's reply to an earlier attempt: it may have taken the mail meanwhile.
            if (signal?.aborted === true) {
              for (const recipient of envelopeTo ?? []) unreached.set(recipient, CUT_BY_STOP);
              lastFailure = undefined;
              throw err;
            }
            const failure = err instanceof DeliveryError ? err : smtpFailure(err, words, plain);
            // No reply to name (no connection, a timeout): the failure is.
            lastFailure = typeof reply === "string" ? undefined : failure.message;
            throw failure;
          }
          for (const recipient of envelopeTo ?? []) unreached.delete(recipient);
          lastFailure = undefined;
          const refused = refusedRecipients(info);
          for (const r of refused)
            unreached.set(r.recipient, r.response === undefined ? "refused" : oneLine(r.response, hidden));
          const later = refused.filter(temporary);
          if (later.length === 0) return;
          envelopeTo = later.map((r) => r.recipient);
          throw new RecipientsRefusedForNow(
            `email: refused for now by the server for ${later.map((r) => `${r.recipient} (${oneLine(r.response ?? "", hidden)})`).join(", ")}`,
            envelopeTo,
          );
        });
      } catch (err) {
        // Nobody has it: the delivery failed. Nor did the delivery end when the gateway's stop cut a retry's
        // wait short and another instance can go on with it (state.backend: redis, mailing those recipients
        // alone); with nothing to hand it on to, the run's replay would mail the whole list again.
        // Otherwise the retries for some recipients ended.
        if (envelopeTo === undefined || (signal?.aborted === true && options.handsOn === true)) throw err;
      }
      if (unreached.size > 0) {
        const who = [...unreached].map(([recipient, reply]) => `${recipient} (${reply})`);
        // A failure already says the server's words hidden, and its own as they are.
        const last =
          lastFailure === undefined ? "" : ` (the last attempt: ${oneLine(lastFailure, (text) => text)})`;
        deps.logger.warn(
          { route: message.route, delivery_id: message.deliveryId, platform: "email" },
          `[delivery] email: route "${message.route}": not delivered to ${who.join(", ")}${last}; the other recipients got it`,
        );
      }
      return { chatId: to };
    },
  };
}
