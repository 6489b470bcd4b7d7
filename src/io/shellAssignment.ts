/**
 * The variable a word such as `GITHUB_TOKEN=ghp_...` sets, as a shell reads it before a program's name
 * (`GITHUB_TOKEN=... npx server`); undefined for any other word. svc runs no shell: such a word in an
 * entry's `command` is taken for the program's name.
 */
export function shellAssignmentName(word: string): string | undefined {
  return /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(word)?.[1];
}
