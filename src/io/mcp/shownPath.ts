import { describe, WrittenAs } from "../../config/describe.js";

/**
 * A TLS file's path (`path`, as rendered) as a message names it: as config.yaml writes it (`written`) when a
 * `${VAR}` gave part of it (`"${CERTS}/me.crt" (the value it gives is not shown)`), never what the variable
 * gave; else the path.
 */
export function shownPath(path: string, written?: string): string {
  return written !== undefined && written !== path && written.includes("${")
    ? describe(new WrittenAs(written))
    : path;
}
