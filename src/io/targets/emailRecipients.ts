import { requiredAtFirstUse } from "../../requiredAtFirstUse.js";

type AddressParser = typeof import("nodemailer/lib/addressparser")["default"];

// Required at the first check: a start with no email recipient to check loads no nodemailer.
const parser = requiredAtFirstUse<AddressParser>("nodemailer/lib/addressparser");

/**
 * Whether `text` names more than one recipient: `a@x, b@y`, `a@x; b@y` or a group `list: b@y, c@y;` (a
 * display name with a comma in quotes, `"Doe, Jane" <jane@x>`, is one).
 */
export function namesSeveralRecipients(text: string): boolean {
  const named = parser()(text);
  return named.length > 1 || named.some((entry) => "group" in entry);
}

/**
 * Whether `text` names no address at all (`{user.email}`, a template the event did not fill, or `bob`):
 * nodemailer reads such text as a display name and refuses the mail as "No recipients defined".
 */
export function namesNoAddress(text: string): boolean {
  const addresses = parser()(text).flatMap((entry) => ("group" in entry ? entry.group : [entry]));
  return !addresses.some(
    (entry) => entry !== undefined && "address" in entry && (entry.address ?? "") !== "",
  );
}

/** The address `text` names, as nodemailer reads it (`Jane <jane@x>` → `jane@x`); undefined when none. */
export function addressOf(text: string): string | undefined {
  const [entry] = parser()(text).flatMap((named) => ("group" in named ? named.group : [named]));
  return entry !== undefined && "address" in entry && entry.address !== "" ? entry.address : undefined;
}

/** Every address `text` names, as nodemailer reads them (`Jane <jane@x>, ops@y` → `jane@x`, `ops@y`). */
export function addressesOf(text: string): string[] {
  return parser()(text)
    .flatMap((named) => ("group" in named ? named.group : [named]))
    .flatMap((entry) =>
      entry !== undefined && "address" in entry && (entry.address ?? "") !== "" ? [entry.address ?? ""] : [],
    );
}
