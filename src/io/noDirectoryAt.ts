import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { otherKind } from "./regularFile.js";

/** noDirectoryAt's fix for a plain file in a directory's place. */
export const MOVE_FILE_AWAY = "move that file away";

/**
 * What stands at `at` where a directory goes, as a message names it, and what to do about it: a file, to move
 * away; a symbolic link to something no directory (`logs -> /dev/null`, to drop the log), whose link is what to
 * change, the device being the system's; a device, named pipe or socket itself, which is no file to move.
 */
export function noDirectoryAt(at: string): { readonly said: string; readonly fix: string } {
  let link = false;
  let what = "a file";
  try {
    link = lstatSync(at).isSymbolicLink();
    what = otherKind(statSync(at)) ?? "a file";
  } catch {
    // gone meanwhile, or its target: said as a file, as before
  }
  if (link) {
    let target: string;
    try {
      target = realpathSync(at);
    } catch {
      target = readlinkSync(at);
    }
    return {
      said: `${at} is a symbolic link to ${target}, which is ${what}, not a directory`,
      fix: "point the link at a directory, or remove the link",
    };
  }
  if (what !== "a file") return { said: `${at} is ${what}, not a directory`, fix: "remove it" };
  return { said: `${at} is a file, not a directory`, fix: MOVE_FILE_AWAY };
}
