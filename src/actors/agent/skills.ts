import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export interface SkillLookup {
  /** The first listed skill found, if any. */
  readonly skill?: { readonly name: string; readonly text: string };
  /** Listed names tried before it (or all of them) that are not installed. */
  readonly missing: readonly string[];
}

async function readSkill(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch {
    return undefined;
  }
}

/** Category directories (`skills/<category>/<name>/SKILL.md`, the layout agent skill trees use), sorted. */
async function categories(skillsDir: string): Promise<string[]> {
  try {
    const entries = await readdir(skillsDir, { withFileTypes: true });
    return entries
      .filter((e) => e.isDirectory() && !e.name.startsWith("."))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

/**
 * The first listed skill that exists at `<skillsDir>/<name>/SKILL.md`, or one category level down at
 * `<skillsDir>/<category>/<name>/SKILL.md`; later entries are ignored. Names that could
 * leave the skills directory are skipped (and reported missing).
 */
export async function findFirstSkill(
  skillsDir: string,
  names: readonly string[] | undefined,
): Promise<SkillLookup> {
  const missing: string[] = [];
  let categoryDirs: string[] | undefined;
  for (const name of names ?? []) {
    if (SKILL_NAME.test(name) && !name.includes("..")) {
      const direct = await readSkill(join(skillsDir, name, "SKILL.md"));
      if (direct !== undefined) return { skill: { name, text: direct }, missing };
      categoryDirs ??= await categories(skillsDir);
      for (const category of categoryDirs) {
        const nested = await readSkill(join(skillsDir, category, name, "SKILL.md"));
        if (nested !== undefined) return { skill: { name, text: nested }, missing };
      }
    }
    missing.push(name);
  }
  return { missing };
}

/** `findFirstSkill` without the names it did not find. */
export async function loadFirstSkill(
  skillsDir: string,
  names: readonly string[] | undefined,
): Promise<{ name: string; text: string } | undefined> {
  const { skill } = await findFirstSkill(skillsDir, names);
  return skill === undefined ? undefined : { ...skill };
}
