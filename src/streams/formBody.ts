/**
 * Form-encoded webhook bodies (`application/x-www-form-urlencoded`): what GitHub, Gitea, Forgejo and Gogs
 * send, with the event's JSON in the `payload` field, when a hook's content type is set to a form.
 */

import { formFieldBytes } from "./formField.js";

const FORM = "application/x-www-form-urlencoded";

/** Whether the request says it is a form: the only body a 2xx can follow that was not parsed as JSON itself. */
export function isForm(headers: Readonly<Record<string, string>>): boolean {
  const type = headers["content-type"];
  if (type === undefined) return false;
  // Asked of every accepted request (delivery history): no copy of the usual `application/json`.
  const semicolon = type.indexOf(";");
  const media = (semicolon < 0 ? type : type.slice(0, semicolon)).trim();
  return media.length === FORM.length && media.toLowerCase() === FORM;
}

/**
 * The bytes of a form body's first `payload` field (the event's JSON), or undefined without one: the
 * bytes the sender encoded (and Gitea, Forgejo and Gogs signed), escapes that are not UTF-8 included.
 */
export function formPayload(body: Buffer): Buffer | undefined {
  return formFieldBytes(body, "payload");
}
