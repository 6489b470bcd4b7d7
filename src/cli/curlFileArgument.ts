import { SvcError } from "../errors.js";
import { terminalText } from "../io/terminalText.js";

/**
 * curl's `-d @file`, written where svc takes JSON (`--payload`, `--args`): no JSON starts with @, so the
 * text names a file, which svc does not read. Refused saying so, with how to give the file's text.
 */
export function refuseCurlFile(option: string, text: string): void {
  if (!text.startsWith("@") || text.length === 1) return;
  throw new SvcError(
    "usage",
    `${option}: ${terminalText(text)} is how curl reads a file, which svc does not do: give the JSON itself, e.g. ${option} "$(cat ${terminalText(text.slice(1))})"`,
  );
}
