import type { Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { NotRegularFile, readRegularFileAsync } from "../../io/regularFile.js";
import { notUtf8Text } from "../../io/textEncoding.js";

const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export interface SkillLookup {
  /** The first listed skill found, if any. */
  readonly skill?: { readonly name: string; readonly text: string };
  /** Listed names tried before it (or all of them) that are not installed. */
  readonly missing: readonly string[];
  /** Listed names before it that cannot name a skill directory (`cat/four`, `../x`), with what to write. */
  readonly refused: ReadonlyArray<{ readonly name: string; readonly why: string }>;
  /**
   * Listed names before it whose SKILL.md is there but cannot be read (its permissions, a directory) or is
   * not UTF-8 text, with why and what to do.
   */
  readonly unreadable: ReadonlyArray<{ readonly name: string; readonly why: string }>;
}

/**
 * Why `name` cannot name a skill: a path (`cat/four`, `../x`, the file `cat/four/SKILL.md`) instead of the
 * skill's own directory name. A skill one category level down is found by its own name (`four` finds
 * `skills/cat/four/SKILL.md`). `given`: a `${VAR}` gave the name, so no part of it is written back.
 */
export function skillNameProblem(name: string, given = false): string | undefined {
  if (SKILL_NAME.test(name) && !name.includes("..")) return undefined;
  const parts = name.split(/[/\\]/).filter((part) => part !== "" && part !== "." && part !== "..");
  // The path of the skill's file names the skill by the directory that holds it.
  if (parts.length > 1 && parts.at(-1)?.toLowerCase() === "skill.md") parts.pop();
  const last = parts.at(-1);
  const hint =
    !given && last !== undefined && last !== name && SKILL_NAME.test(last)
      ? ` — write ${last}, the skill's directory name (found at skills/${last}/ or skills/<category>/${last}/)`
      : "";
  return `not a skill name (letters, digits, ".", "_" and "-", no path)${hint}`;
}

/**
 * The text of a SKILL.md; undefined when there is none, `{ error }` (saying what to do) when there is one that
 * cannot be read (a file of another user's without read permission, a directory of that name, a named pipe): "not found"
 * would send the operator looking for a file that is there. So is one saved as UTF-16 (PowerShell 5's `>`)
 * or in another encoding than UTF-8: read anyway, the model would get NULs between the letters, or U+FFFD
 * for its accented letters, in place of the instructions. `shown`: the file as the error names it (its path,
 * or the words for it when its path holds a name a `${VAR}` gave).
 */
async function readSkill(
  file: string,
  shown: string = file,
): Promise<string | undefined | { readonly error: string }> {
  let bytes: Buffer;
  try {
    bytes = await readRegularFileAsync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    if (err instanceof NotRegularFile)
      return {
        error: `${shown} cannot be read (it is not a regular file: ${err.kind}) — write the skill's instructions in a file there`,
      };
    // The system's message names the file: of one whose path is not shown, only its code is told.
    const why = code ?? (shown === file ? (err as Error).message : undefined);
    return {
      error: `${shown} cannot be read${why === undefined ? "" : ` (${why})`} — check that it is a file the gateway's user may read`,
    };
  }
  const problem = notUtf8Text(bytes);
  if (problem !== undefined) return { error: `${shown}: ${problem}` };
  // A byte order mark ("UTF-8 with BOM", as Windows editors save) is no part of the instructions.
  return bytes.toString("utf8").replace(/^\uFEFF/, "");
}

/**
 * Category directories (`skills/<category>/<name>/SKILL.md`, the layout agent skill trees use), sorted,
 * and symlinks to one (a shared skill tree linked in as a category); a link to nothing (or to itself) is none.
 */
async function categories(skillsDir: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(skillsDir, { withFileTypes: true });
  } catch {
    return [];
  }
  const names: string[] = [];
  for (const e of entries) {
    if (e.name.startsWith(".")) continue;
    if (e.isDirectory() || (e.isSymbolicLink() && (await isDirectory(join(skillsDir, e.name)))))
      names.push(e.name);
  }
  return names.sort();
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The first listed skill that exists at `<skillsDir>/<name>/SKILL.md`, or one category level down at
 * `<skillsDir>/<category>/<name>/SKILL.md`; later entries are ignored. A name that is a path (and so
 * could leave the skills directory) is skipped and reported as refused, with what to write instead.
 * `given(name)`: a `${VAR}` gave that name, so what is said of it writes back no part of it (no name to
 * write instead, no path of its SKILL.md).
 */
export async function findFirstSkill(
  skillsDir: string,
  names: readonly string[] | undefined,
  given: (name: string) => boolean = () => false,
): Promise<SkillLookup> {
  const missing: string[] = [];
  const refused: Array<{ name: string; why: string }> = [];
  const unreadable: Array<{ name: string; why: string }> = [];
  let categoryDirs: string[] | undefined;
  for (const name of names ?? []) {
    const hidden = given(name);
    const problem = skillNameProblem(name, hidden);
    if (problem !== undefined) {
      refused.push({ name, why: problem });
      continue;
    }
    // Its path holds the name: one a variable gave is said as the directory it is in.
    const shown = (...category: string[]) =>
      hidden ? `its SKILL.md (under ${join(skillsDir, ...category)})` : undefined;
    let text = await readSkill(join(skillsDir, name, "SKILL.md"), shown());
    if (text === undefined) {
      categoryDirs ??= await categories(skillsDir);
      for (const category of categoryDirs) {
        text = await readSkill(join(skillsDir, category, name, "SKILL.md"), shown(category));
        if (text !== undefined) break;
      }
    }
    if (typeof text === "string") return { skill: { name, text }, missing, refused, unreadable };
    if (text === undefined) missing.push(name);
    else unreadable.push({ name, why: text.error });
  }
  return { missing, refused, unreadable };
}

/** `findFirstSkill` without the names it did not find. */
export async function loadFirstSkill(
  skillsDir: string,
  names: readonly string[] | undefined,
): Promise<{ name: string; text: string } | undefined> {
  const { skill } = await findFirstSkill(skillsDir, names);
  return skill === undefined ? undefined : { ...skill };
}
