import { readFileSync } from "node:fs";
import { describeError, SvcError } from "../../errors.js";
import { openFilesFix } from "../openFiles.js";
import { permissionFix } from "../permissionFix.js";

/**
 * A store file's text. A file that cannot be read at all (another user's, a directory in its place) is
 * named as that, apart from a file whose content is not the store's format (its caller's own message).
 */
export function readStoreText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    const fix = permissionFix(path, err) ?? openFilesFix(err);
    throw new SvcError(
      "store_corrupt",
      `${path}: cannot be read (${describeError(err)})${fix === undefined ? "" : ` — ${fix}`}`,
      { cause: err },
    );
  }
}
