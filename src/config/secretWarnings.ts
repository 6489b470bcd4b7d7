import { isPublicKeySecret, whpkKey } from "../streams/publicKeySignature.js";
import { readableInHeader } from "../streams/signatureChecks.js";
import { whsecKey } from "../streams/signatures.js";
import { INSECURE_NO_AUTH, routeKey, type SecretWriting, secretWriting } from "./sections/webhook.js";

/** A route and the secret it checks requests with: its own (`route.secret`), or the global one. */
export interface SecretRoute {
  readonly name: string;
  readonly secret: string;
  readonly route: { readonly secret?: string | undefined };
}

/** Why a sender that sends the secret itself in a header could never match it; undefined when it can. */
export function secretHeaderProblem(secret: string): string | undefined {
  if (secret === INSECURE_NO_AUTH) return undefined;
  return !readableInHeader(secret)
    ? "has a character outside printable ASCII"
    : secret.trim() !== secret
      ? "begins or ends with a space, which HTTP strips from a header's value"
      : undefined;
}

/** A `whpk_` secret (a Standard Webhooks public key) that is no 32-byte Ed25519 key: it verifies nothing. */
export function publicKeySecretProblem(secret: string): string | undefined {
  return isPublicKeySecret(secret) && whpkKey(secret) === undefined
    ? "starts with whpk_ (a Standard Webhooks public key) but the rest is not the base64 of a 32-byte Ed25519 key, so every request is answered 401 — copy the sender's whpk_ key whole"
    : undefined;
}

/**
 * A `whsec_` secret (a Standard Webhooks or Svix signing secret, the base64 of its key) whose rest is no
 * base64: it encodes no key (as in the senders' own libraries, which refuse it), so every such signature is
 * answered 401. Stripe keys its HMAC with the whole text, so the route may still serve other senders.
 */
export function signingSecretProblem(secret: string): string | undefined {
  return secret.startsWith("whsec_") && whsecKey(secret) === undefined
    ? "starts with whsec_ (a Standard Webhooks or Svix signing secret) but the rest is not base64, so no Standard Webhooks or Svix signature verifies with it (Stripe's and the other HMAC schemes, keyed with the whole text, still do) — copy the sender's whsec_ secret whole"
    : undefined;
}

/**
 * `insecure_no_auth` (or any other spelling of INSECURE_NO_AUTH but the capitals, edge spaces included): not
 * the value that turns the check off, so it is taken as a real secret that anyone can guess. Quoting it
 * gives nothing away: its text is the one every reader of the docs knows.
 */
export function sentinelSpellingProblem(secret: string): string | undefined {
  return secret !== INSECURE_NO_AUTH && secret.trim().toUpperCase() === INSECURE_NO_AUTH
    ? `is ${JSON.stringify(secret)}, which is not INSECURE_NO_AUTH (the value that turns the signature check off is written exactly so, in capitals): it is taken as a real secret, one anyone can guess, and every request must be signed or sent with it — write INSECURE_NO_AUTH to check nothing (loopback binds only), or set a real secret (svc gateway setup generates one)`
    : undefined;
}

/** `$GH_SECRET`: a variable as a shell or docker compose writes it without braces, which svc does not replace. */
const BARE_VARIABLE = /^\$[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether a secret's text is a whole `$NAME` (a shell's variable form), which svc does not replace. */
export const writtenAsBareVariable = (text: string): boolean => BARE_VARIABLE.test(text);

// The value is never quoted: it may be the secret itself.
const BARE_VARIABLE_PROBLEM =
  'is a $ followed by a name, as a shell or docker compose writes a variable, but svc replaces only ${NAME} (with braces): the text itself is the secret, so every signature and token from a sender keyed with the variable\'s value is answered 401 — write it as ${NAME}, in quotes (secret: "${NAME}")';

/**
 * BARE_VARIABLE_PROBLEM for a variable that wrote a secret (WEBHOOK_SECRET, or the NAME of config.yaml's
 * whole `${NAME}`) written so in `.env`, which replaces only `${NAME}` too.
 */
const BARE_IN_ENV_FILE_PROBLEM =
  "is a $ followed by a name, as a shell or docker compose writes a variable, but svc replaces only ${NAME} (with braces) in .env: the text itself is the secret, so every signature and token from a sender keyed with the variable's value is answered 401 — write it as ${NAME} (NAME set on a line above it, or in the environment), or in 'single quotes' if this text is the secret itself";

/** BARE_VARIABLE_PROBLEM for such a variable (`name`) so in the environment, whose values nothing renders. */
const bareInEnvironmentProblem = (name: string): string =>
  `is a $ followed by a name, as a shell or docker compose writes a variable, but nothing replaced it (the tool that started svc passed it as written, as systemd's Environment= does): the text itself is the secret, so every signature and token from a sender keyed with the variable's value is answered 401 — give ${name} the secret itself`;

/**
 * The bare-`$NAME` warning for a secret a variable wrote (`writing.from`): WEBHOOK_SECRET, or the NAME of
 * config.yaml's whole `${NAME}` at `key`; the problem fits where the variable is set.
 */
function bareInVariableProblem(
  writing: SecretWriting & { from: string },
  key: string,
  usedBy: string,
): string {
  const fromEnvironment = writing.from.startsWith("environment variable");
  const what = writing.substituted === undefined ? "the global secret" : `substituted by ${key}`;
  return `${writing.from} (${what}; ${usedBy}) ${fromEnvironment ? bareInEnvironmentProblem(writing.substituted ?? "WEBHOOK_SECRET") : BARE_IN_ENV_FILE_PROBLEM}`;
}

/** `${NAME}`, `${NAME:-fallback}` or a whole `$NAME`: a variable as config.yaml, a shell or compose writes one. */
const VARIABLE_FORM = /\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}|^\$[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether a secret taken as written is a variable's form (`${NAME}`, `$NAME`), which nothing replaces there. */
export const writtenAsVariable = (secret: string): boolean => VARIABLE_FORM.test(secret);

/**
 * A subscription's secret written as a variable (`${GH_SECRET}`, copied from a config.yaml route, or
 * `--secret '${GH_SECRET}'` quoted away from the shell): the subscription store replaces no variable, so
 * the text itself is the HMAC key and every request is answered 401. The value is never quoted.
 */
export function storedSecretVariableProblem(secret: string, name: string): string | undefined {
  return writtenAsVariable(secret)
    ? `is written as a variable (\${NAME} or $NAME), but a subscription's values are taken as written (svc replaces variables in config.yaml only), so the text itself is the secret and every signature from a sender keyed with the variable's value is answered 401 — store the secret itself: svc webhook subscribe ${name} --secret "$NAME" (the shell replaces it)`
    : undefined;
}

/**
 * What is wrong with a subscription's own secret, as `svc config check` and the gateway's load name it
 * (after `<name>.secret `), or undefined: a whpk_ or whsec_ that is no key, a variable never replaced, a line break
 * at an end, or a character a token header cannot carry. The value is never quoted.
 */
export function subscriptionSecretProblem(secret: string, name: string): string | undefined {
  const header = secretHeaderProblem(secret);
  return (
    sentinelSpellingProblem(secret) ??
    publicKeySecretProblem(secret) ??
    signingSecretProblem(secret) ??
    storedSecretVariableProblem(secret, name) ??
    secretLineBreakProblem(secret) ??
    (header === undefined
      ? undefined
      : `${header}, so a sender that sends the secret itself (X-Gitlab-Token, Authorization: Bearer) is always answered 401; HMAC signatures still verify — svc webhook subscribe ${name} --secret <printable ASCII> if this route takes tokens`)
  );
}

/** A line break at either end: what a YAML `|` block or a value read from a file with its final newline leaves. */
const EDGE_LINE_BREAK = /^[\r\n]|[\r\n]$/;

/**
 * A secret with a line break at either end: senders' secret fields (GitHub, GitLab, Stripe, Svix...) hold one
 * line, so no sender keys its HMAC with such a secret or sends it as a token; every request is answered 401.
 */
export function secretLineBreakProblem(secret: string): string | undefined {
  return EDGE_LINE_BREAK.test(secret)
    ? "begins or ends with a line break (a YAML | block, or a value read from a file with its final newline), which no sender's secret field holds, so every signature and token is answered 401 — remove the line break (write the value on the key's line, or |- in YAML; strip the file's last newline)"
    : undefined;
}

/**
 * What secretCharacterWarnings says of one secret, `at` naming where it is written (`<file>: <key>`; none
 * when nothing). A `$NAME` is judged on the text that wrote the secret when `writing` says how (a value a
 * variable gave is text, never a variable's form), named at the variable that wrote it when one did
 * (WEBHOOK_SECRET, or the NAME of config.yaml's whole `${NAME}` at `key`; `usedBy`: who uses it); on the
 * value otherwise.
 */
function secretCharacterProblems(
  secret: string,
  at: string,
  writing: SecretWriting | undefined,
  usedBy: string,
  key: string,
): string[] {
  const sentinel = sentinelSpellingProblem(secret);
  if (sentinel !== undefined) return [`${at} ${sentinel}`];
  const problems: string[] = [];
  const publicKey = publicKeySecretProblem(secret);
  if (publicKey !== undefined) problems.push(`${at} ${publicKey}`);
  const signing = signingSecretProblem(secret);
  if (signing !== undefined) problems.push(`${at} ${signing}`);
  if (writing === undefined ? BARE_VARIABLE.test(secret) : writing.bareVariable)
    return [
      ...problems,
      writing?.from === undefined
        ? `${at} ${BARE_VARIABLE_PROBLEM}`
        : bareInVariableProblem({ ...writing, from: writing.from }, key, usedBy),
    ];
  const lineBreak = secretLineBreakProblem(secret);
  if (lineBreak !== undefined) return [...problems, `${at} ${lineBreak}`];
  const problem = secretHeaderProblem(secret);
  if (problem !== undefined)
    problems.push(
      `${at} ${problem}, so a sender that sends the secret itself (X-Gitlab-Token, Authorization: Bearer) is always answered 401; HMAC signatures and Basic credentials still verify — use a printable ASCII secret without edge spaces (svc gateway setup generates one) if this route takes tokens`,
    );
  return problems;
}

/**
 * A secret with a character outside printable ASCII, or a space at either end, verifies HMAC signatures
 * (it is only their key) and `Basic` credentials (base64 on the wire), but never a header that carries the
 * secret itself: token and `Bearer` headers are printable ASCII, and HTTP strips their edge spaces. Named at startup, without the secret,
 * so that such a route is not left answering 401 to every GitLab token without a word. `subscriptionSecret`:
 * the global secret while the adapter is on, which every subscription without a secret of its own falls back
 * to: judged too when no route of `routes` uses it (`secret: $GLOBAL_SEC` would be their HMAC key). A `$NAME`
 * is judged on the text that wrote each secret (secretWriting, `globalWriting`), never on a value a variable
 * gave (`secret: ${GS}`, `.env`'s `GS='$Abc…'`); WEBHOOK_SECRET written so, or GS (`GS=$Abc` unquoted in
 * `.env`, or in the environment), is named as that variable.
 */
export function secretCharacterWarnings(
  routes: Iterable<SecretRoute>,
  file: string,
  globalKey = "platforms.webhook.secret",
  subscriptionSecret?: string,
  /** How the global secret is written (noted at load on platforms.webhook: the route table's `globalSecretWriting`). */
  globalWriting?: SecretWriting,
): string[] {
  const warnings: string[] = [];
  let global = false;
  for (const { name, secret, route } of routes) {
    global ||= route.secret === undefined;
    const usedBy = `route ${name} uses it`;
    const problems =
      route.secret === undefined
        ? secretCharacterProblems(
            secret,
            `${file}: ${globalKey} (the global secret or WEBHOOK_SECRET, which overrides it; ${usedBy})`,
            globalWriting,
            usedBy,
            `${globalKey}, the global secret`,
          )
        : secretCharacterProblems(
            secret,
            `${file}: ${routeKey(name, route)}.secret`,
            secretWriting(route),
            usedBy,
            `${routeKey(name, route)}.secret`,
          );
    for (const problem of problems) warnings.push(`[webhook] ${problem}`);
  }
  if (!global && subscriptionSecret !== undefined) {
    const usedBy = "every subscription without a secret of its own uses it";
    const at = `${file}: ${globalKey} (the global secret or WEBHOOK_SECRET, which overrides it; ${usedBy})`;
    const key = `${globalKey}, the global secret`;
    for (const problem of secretCharacterProblems(subscriptionSecret, at, globalWriting, usedBy, key))
      warnings.push(`[webhook] ${problem}`);
  }
  return warnings;
}
