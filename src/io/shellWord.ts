/** A word (a path, a key, a delivery id) as a shell reads it back: quoted when it holds anything but plain characters. */
export function shellWord(word: string): string {
  return /^[\w.,:@%+=/-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}
