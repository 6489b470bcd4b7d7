/** A word (a path, a key, a delivery id) as a shell reads it back: quoted when it holds anything but plain characters. */
export function shellWord(word: string): string {
  return /^[\w.,:@%+=/-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * A word for a command line `svc` prints for the user to paste: as `shellWord` gives it, or, when it holds a
 * control or invisible character (a server name written by hand in config.yaml), in `$'…'` with each of those
 * escaped, which bash and zsh read back as the word, where the raw character would act on the terminal: one
 * below U+0080 as `\xHH`, one from U+0080 up as its code point (`\u00ad`, read as its UTF-8; `\xad` would be
 * one raw byte, another word).
 */
export function pastedWord(word: string): string {
  if (!/[\p{Cc}\p{Cf}\u2028\u2029]/u.test(word)) return shellWord(word);
  const escaped = [...word]
    .map((c) => {
      if (c === "\\" || c === "'") return `\\${c}`;
      if (!/[\p{Cc}\p{Cf}\u2028\u2029]/u.test(c)) return c;
      const code = c.codePointAt(0) as number;
      if (code < 0x80) return `\\x${code.toString(16).padStart(2, "0")}`;
      return code < 0x10000
        ? `\\u${code.toString(16).padStart(4, "0")}`
        : `\\U${code.toString(16).padStart(8, "0")}`;
    })
    .join("");
  return `$'${escaped}'`;
}
