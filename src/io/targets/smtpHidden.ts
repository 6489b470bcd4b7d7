import { dotenvValuesAt } from "../../config/givenValues.js";
import type { PlatformConfig } from "../../config/sections/platforms.js";
import { MIN_SCRUBBED, scrub, secretTextForms } from "../credentials.js";
import { addressesOf, namesSeveralRecipients } from "./emailRecipients.js";

const REDACTED = "[redacted]";
const regexpEscaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The password as it may come back in a server's reply: as written, and as the base64 nodemailer sends
 * it in (`AUTH PLAIN <base64 of NUL user NUL password>`, or the password alone after `AUTH LOGIN`). A
 * server refusing the login may quote the command it refused (`535 5.7.8 ... AUTH PLAIN AHN2YwBTTVRQ...`),
 * and that base64 decodes to the password.
 */
export function smtpCredentialForms(settings: PlatformConfig<"email">): string[] {
  const { user, password } = settings;
  if (password === undefined || password === "") return [];
  const base64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
  return [
    ...(user === undefined ? [] : [base64(`\u0000${user}\u0000${password}`)]),
    base64(password),
    password,
  ];
}

/**
 * `values` replaced by `[redacted]` in a text where each stands as a word of its own, as a host does in the
 * system's words (`withHostAsWritten`): not inside a longer word or name (`mail` in `mailbox`, `email` or
 * `mail.example.org`), in any of the forms text carries a value in (`secretTextForms`). A value shorter than
 * `scrub` looks for is left, as there.
 */
function wholeWords(values: readonly string[]): (text: string) => string {
  const forms = [
    ...new Set(values.filter((value) => value.length >= MIN_SCRUBBED).flatMap(secretTextForms)),
  ].sort((a, b) => b.length - a.length);
  if (forms.length === 0) return (text) => text;
  const word = new RegExp(
    `(?<![\\w-]|[\\w-]\\.)(?:${forms.map(regexpEscaped).join("|")})(?![\\w-]|\\.[\\w-])`,
    "g",
  );
  return (text) => text.replace(word, REDACTED);
}

/**
 * The addresses the values `.env` gave `from`, `user` and `home_channel` name (`Alerts <alerts@example.org>`:
 * `alerts@example.org`), which a server quotes alone (`553 5.7.1 <alerts@example.org>: Sender address
 * rejected`). Not those of a home_channel that names several recipients: the warning of recipients not
 * reached names each of them.
 */
function addressesGiven(settings: PlatformConfig<"email">): string[] {
  // nodemailer's address parser is loaded only for a value .env gave one of them.
  const list = () => namesSeveralRecipients(settings.home_channel ?? "");
  return ["from", "user", "home_channel"].flatMap((key) => {
    const values = dotenvValuesAt(settings, key);
    return values.length === 0 || (key === "home_channel" && list()) ? [] : values.flatMap(addressesOf);
  });
}

/**
 * The settings whose values `.env` gave are hidden in the server's words: those that say where and as whom svc
 * sends. Not the others (`subject`, `secure`): `SUBJECT=Alerts` would hide the word `Alerts` in every reply.
 */
const HIDDEN_SETTINGS = ["host", "user", "password", "from", "home_channel"] as const;

/**
 * What the e-mail target hides of nodemailer's words and the server's replies, never of its own (its hints,
 * the keys they name): the password in each form it may come back in, wherever it stands, and each value `.env`
 * gave one of `HIDDEN_SETTINGS` (the host, the user, the password, the from address, the home_channel), and the
 * address such a value names beside a display name (`addressesGiven`), where it stands as a word of its own, so
 * `SMTP_HOST=mail` (a compose service's name) hides `mail` and keeps `mailbox`.
 */
export function smtpHidden(settings: PlatformConfig<"email">): (text: string) => string {
  const credentials = smtpCredentialForms(settings);
  const given = wholeWords([
    ...HIDDEN_SETTINGS.flatMap((key) => dotenvValuesAt(settings, key)),
    ...addressesGiven(settings),
  ]);
  return (text) => given(scrub(text, credentials));
}
