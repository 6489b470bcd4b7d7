/**
 * A device authorization answer (RFC 8628 section 3.2) as real servers write it, read as the RFC names it,
 * or what svc cannot use in it:
 * - Google names the verification URL `verification_url` (the name of the RFC 8628 drafts): read as
 *   `verification_uri` when that is missing;
 * - Microsoft Entra ID's v1 endpoint writes `interval` and `expires_in` as strings (`"5"`): read as numbers;
 * - an `interval` of 0 or less states no usable wait: read as absent (5 s);
 * - a relative `verification_uri` (`/activate`) is resolved against the endpoint's URL, which is where the
 *   user's browser would resolve it; a host without its scheme (`example.com/device`), or one that is not
 *   http(s) then, is refused (a user is sent nowhere else); an unusable OPTIONAL `verification_uri_complete`
 *   is left out;
 * - `device_code`, `user_code`, `verification_uri` and `expires_in` are REQUIRED: an answer without one is
 *   refused, as is a field of the wrong type.
 */
export type DeviceAnswerReading = { readonly fields: Record<string, unknown> } | { readonly problem: string };

/** A whole number of seconds written as a string (`"5"`), as a number; anything else as it is. */
function numericString(value: unknown): unknown {
  return typeof value === "string" && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
}

/** `value` resolved against `endpoint` when it is an http(s) URL then, else why it is not usable. */
function webAddress(
  name: string,
  value: unknown,
  endpoint: string,
): { readonly url: string } | { readonly problem: string } {
  if (typeof value !== "string" || value.trim() === "") return { problem: `${name} is not a URL` };
  const written = value.trim();
  // A relative reference is resolved against the endpoint, but one whose first segment holds a dot
  // (`example.com/device`) names a host without its scheme, not a page beside the endpoint.
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(written) && /^[^/?#]*\.[^/?#]*(?:[/?#]|$)/.test(written))
    return { problem: `${name} ${JSON.stringify(value)} is a host without a scheme, not a URL` };
  let url: URL;
  try {
    url = new URL(written, endpoint);
  } catch {
    return { problem: `${name} ${JSON.stringify(value)} is not a URL` };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return { problem: `${name} ${JSON.stringify(value)} is not an http(s) URL` };
  return { url: url.href };
}

export function readDeviceAnswer(body: unknown, endpoint: string): DeviceAnswerReading {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return { problem: "not a JSON object" };
  const fields = { ...(body as Record<string, unknown>) };
  for (const name of ["device_code", "user_code"])
    if (typeof fields[name] !== "string" || fields[name] === "")
      return { problem: fields[name] === undefined ? `no ${name}` : `${name} is not a string` };
  if (fields.verification_uri === undefined && fields.verification_url !== undefined)
    fields.verification_uri = fields.verification_url;
  if (fields.verification_uri === undefined) return { problem: "no verification_uri" };
  const uri = webAddress("verification_uri", fields.verification_uri, endpoint);
  if ("problem" in uri) return uri;
  fields.verification_uri = uri.url;
  if (fields.verification_uri_complete !== undefined) {
    // OPTIONAL: one svc cannot use is left out, and the user opens verification_uri and types the code.
    const complete = webAddress("verification_uri_complete", fields.verification_uri_complete, endpoint);
    if ("problem" in complete) delete fields.verification_uri_complete;
    else fields.verification_uri_complete = complete.url;
  }
  const expiresIn = numericString(fields.expires_in);
  if (expiresIn === undefined) return { problem: "no expires_in" };
  if (typeof expiresIn !== "number" || !Number.isFinite(expiresIn) || expiresIn <= 0)
    return { problem: "expires_in is not a positive number of seconds" };
  fields.expires_in = expiresIn;
  const interval = numericString(fields.interval);
  if (interval !== undefined && (typeof interval !== "number" || !Number.isFinite(interval)))
    return { problem: "interval is not a number of seconds" };
  if (typeof interval === "number" && interval <= 0) delete fields.interval;
  else if (interval !== undefined) fields.interval = interval;
  return { fields };
}
