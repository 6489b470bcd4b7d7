import { cutText } from "../cutText.js";
import { addressOf } from "./emailRecipients.js";

const PLACEHOLDER = /\{[^{}]*\}/;
/** The domain a literal part of a template writes after its `@` (`@example.com` → `example.com`). */
const WRITTEN_DOMAIN = /@([^\s<>()[\]"',;:@{}]+)/;
/** What a placeholder may fill into a domain the route writes part of: host labels, no other text. */
const LABELS = "[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*";

/** The domain a route writes, as shown (`example.com`, `{team}.example.com`) and as matched. */
interface WrittenDomain {
  readonly shown: string;
  readonly matches: RegExp;
  /** Written in part (`ops@{team}.example.com`): the rendered text must be the bare address itself. */
  readonly partly: boolean;
}

function writtenDomain(template: string): WrittenDomain | undefined {
  const literals = template.split(new RegExp(PLACEHOLDER, "g"));
  const whole = literals
    .map((literal) => WRITTEN_DOMAIN.exec(literal)?.[1])
    .find((found) => found !== undefined);
  if (whole !== undefined)
    return { shown: whole, matches: new RegExp(`^${escaped(whole)}$`, "i"), partly: false };
  // `ops@{team}.example.com`: the route writes the `@` and the rest of the domain around the payload's part.
  const after = afterLastWrittenAt(template);
  if (after === undefined) return undefined;
  const domain = template.slice(after);
  if (!PLACEHOLDER.test(domain)) return undefined;
  const pattern = domain
    .split(new RegExp(`(${PLACEHOLDER.source})`))
    .map((piece, i) => (i % 2 === 1 ? LABELS : escaped(piece)))
    .join("");
  return { shown: domain, matches: new RegExp(`^${pattern}$`, "i"), partly: true };
}

/** Where the text after the last `@` the route writes itself (outside its placeholders) starts. */
function afterLastWrittenAt(template: string): number | undefined {
  let after: number | undefined;
  let from = 0;
  const literal = (end: number) => {
    const at = template.slice(from, end).lastIndexOf("@");
    if (at >= 0) after = from + at + 1;
  };
  for (const match of template.matchAll(new RegExp(PLACEHOLDER, "g"))) {
    literal(match.index);
    from = match.index + match[0].length;
  }
  literal(template.length);
  return after;
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Why a recipient rendered from `written` (`{user.login}@example.com`) does not go to the domain the route
 * writes, or undefined. Text from the payload can make nodemailer read another address out of it:
 * `attacker@evil.org (@example.com` is attacker@evil.org with a comment, `x <attacker@evil.org>@example.com`
 * the address in brackets; a login holding an `@` makes one with two. A route that writes part of the
 * domain (`ops@{team}.example.com`) sends only to a domain of that shape, and only to the bare address the
 * text is (`evil.org (` as the team made `ops@evil.org`). A template that writes no domain (`{user.email}`,
 * `{name} <{email}>`) leaves the address to the event.
 */
export function writtenDomainProblem(key: string, written: unknown, rendered: string): string | undefined {
  if (typeof written !== "string" || !PLACEHOLDER.test(written)) return undefined;
  const domain = writtenDomain(written);
  if (domain === undefined) return undefined;
  const address = addressOf(rendered) ?? "";
  const at = address.indexOf("@");
  if (
    at > 0 &&
    at === address.lastIndexOf("@") &&
    domain.matches.test(address.slice(at + 1)) &&
    (!domain.partly || address === rendered.trim())
  )
    return undefined;
  return `deliver_extra.${key} ${JSON.stringify(cutText(rendered, 100))} is not an address at @${domain.shown}, which the route writes — the payload filled in text that changes the address; nothing sent`;
}
