import { readdirSync } from "node:fs";
import { join } from "node:path";
import { profilesAmong } from "../config/paths.js";

/**
 * The profiles that exist on disk: `default` (always), then each directory under `<home>/profiles/`
 * whose name is a valid profile name. A missing `profiles/` means only the default profile.
 */
export function existingProfiles(home: string): string[] {
  let names: string[];
  try {
    names = readdirSync(join(home, "profiles"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    names = [];
  }
  return profilesAmong(names);
}
