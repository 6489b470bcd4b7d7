import { readFileSync } from "node:fs";
import { isScalar, parseDocument } from "yaml";

/**
 * Whether a config.yaml holds no setting at all (empty, or only comments and blank lines): what an
 * editor that truncates before it writes leaves for a moment. Unreadable or broken text is not blank
 * (the loader names that problem itself).
 */
export function configFileIsBlank(file: string): boolean {
  try {
    return isBlankYaml(readFileSync(file, "utf8"));
  } catch {
    return false;
  }
}

export function isBlankYaml(text: string): boolean {
  const doc = parseDocument(text);
  const { contents } = doc;
  return doc.errors.length === 0 && (contents === null || (isScalar(contents) && contents.value === null));
}
