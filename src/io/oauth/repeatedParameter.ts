/**
 * The parameters of an authorization response svc reads (the code, its state, the issuer, and an error
 * redirect's own). Each must come once: with two codes or two states, which one the server meant is unknown.
 */
const RESPONSE_PARAMETERS = ["code", "state", "iss", "error", "error_description", "error_uri"] as const;

/** The first authorization-response parameter the redirect carries more than once, else undefined. */
export function repeatedParameter(params: URLSearchParams): string | undefined {
  for (const name of RESPONSE_PARAMETERS) if (params.getAll(name).length > 1) return name;
  return undefined;
}
