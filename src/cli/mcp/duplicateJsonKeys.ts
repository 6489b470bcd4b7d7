/**
 * The paths of the keys a JSON text writes twice in one object (`["mcpServers", "github"]`), each once, in
 * the order of their second writing: JSON.parse keeps the last value of such a key without a word, so the
 * first is lost. `text` is valid JSON (JSON.parse read it).
 */
export function duplicateJsonKeys(text: string): string[][] {
  const found: string[][] = [];
  const seen = new Set<string>();
  let at = 0;
  const skipSpace = () => {
    while (at < text.length && /\s/.test(text[at] as string)) at += 1;
  };
  const readString = (): string => {
    const start = at;
    at += 1;
    while (text[at] !== '"') at += text[at] === "\\" ? 2 : 1;
    at += 1;
    return JSON.parse(text.slice(start, at)) as string;
  };
  const readValue = (path: readonly string[]): void => {
    skipSpace();
    const c = text[at];
    if (c === "{") {
      at += 1;
      const keys = new Set<string>();
      for (skipSpace(); text[at] !== "}"; skipSpace()) {
        if (text[at] === ",") {
          at += 1;
          skipSpace();
        }
        const key = readString();
        const keyPath = [...path, key];
        if (keys.has(key) && !seen.has(JSON.stringify(keyPath))) {
          seen.add(JSON.stringify(keyPath));
          found.push(keyPath);
        }
        keys.add(key);
        skipSpace();
        at += 1; // the colon
        readValue(keyPath);
      }
      at += 1;
    } else if (c === "[") {
      at += 1;
      for (let i = 0; ; i += 1) {
        skipSpace();
        if (text[at] === "]") break;
        if (text[at] === ",") at += 1;
        readValue([...path, String(i)]);
      }
      at += 1;
    } else if (c === '"') readString();
    else while (at < text.length && !/[\s,}\]]/.test(text[at] as string)) at += 1;
  };
  readValue([]);
  return found;
}
