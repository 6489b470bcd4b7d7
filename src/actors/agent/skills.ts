import { readFile } from "node:fs/promises";
import { join } from "node:path";

const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * The first listed skill that exists at `<skillsDir>/<name>/SKILL.md`; later entries are ignored
 * (spec 2.2). Names that could leave the skills directory are skipped.
 */
export async function loadFirstSkill(
  skillsDir: string,
  names: readonly string[] | undefined,
): Promise<{ name: string; text: string } | undefined> {
  for (const name of names ?? []) {
    if (!SKILL_NAME.test(name) || name.includes("..")) continue;
    try {
      return { name, text: await readFile(join(skillsDir, name, "SKILL.md"), "utf8") };
    } catch {
      // Not installed: try the next one.
    }
  }
  return undefined;
}
