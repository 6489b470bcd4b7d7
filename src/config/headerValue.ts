/**
 * Characters fetch refuses in an HTTP header value, naming neither the setting nor the fix: a control
 * character other than tab ("invalid header value"), and one outside Latin-1, since header values travel as
 * bytes ("Cannot convert argument to a ByteString because the character at index 8 has a value of 10003").
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
export const HEADER_CONTROL = /[\0-\x08\n-\x1f\x7f]/;
export const HEADER_NOT_LATIN1 = /[\u0100-\u{10ffff}]/u;
