import { cutText } from "../cutText.js";
import { addressOf } from "./emailRecipients.js";

const PLACEHOLDER = /\{[^{}]*\}/;
/** The domain a literal part of a template writes after its `@` (`@example.com` → `example.com`). */
const WRITTEN_DOMAIN = /@([^\s<>()[\]"',;:@{}]+)/;

/**
 * Why a recipient rendered from `written` (`{user.login}@example.com`) does not go to the domain the route
 * writes, or undefined. Text from the payload can make nodemailer read another address out of it:
 * `attacker@evil.org (@example.com` is attacker@evil.org with a comment, `x <attacker@evil.org>@example.com`
 * the address in brackets; a login holding an `@` makes one with two. A template that writes no domain
 * (`{user.email}`, `{name} <{email}>`) leaves the address to the event.
 */
export function writtenDomainProblem(key: string, written: unknown, rendered: string): string | undefined {
  if (typeof written !== "string" || !PLACEHOLDER.test(written)) return undefined;
  const domain = written
    .split(new RegExp(PLACEHOLDER, "g"))
    .map((literal) => WRITTEN_DOMAIN.exec(literal)?.[1])
    .find((found) => found !== undefined);
  if (domain === undefined) return undefined;
  const address = addressOf(rendered) ?? "";
  const at = address.indexOf("@");
  if (
    at > 0 &&
    at === address.lastIndexOf("@") &&
    address.slice(at + 1).toLowerCase() === domain.toLowerCase()
  )
    return undefined;
  return `deliver_extra.${key} ${JSON.stringify(cutText(rendered, 100))} is not an address at @${domain}, which the route writes — the payload filled in text that changes the address; nothing sent`;
}
