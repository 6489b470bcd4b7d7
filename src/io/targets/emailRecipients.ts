import addressparser from "nodemailer/lib/addressparser";

/**
 * Whether `text` names more than one recipient: `a@x, b@y`, `a@x; b@y` or a group `list: b@y, c@y;` (a
 * display name with a comma in quotes, `"Doe, Jane" <jane@x>`, is one).
 */
export function namesSeveralRecipients(text: string): boolean {
  const named = addressparser(text);
  return named.length > 1 || named.some((entry) => "group" in entry);
}
