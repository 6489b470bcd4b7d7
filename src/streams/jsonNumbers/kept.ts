/**
 * What is kept of a parsed container (numbers' source texts, the written key order), held on the container
 * itself.
 */

/**
 * What is kept of a parsed array or object beyond its value: a container has one when it holds such a
 * number or is such an object (`INSIDE` when it only has one somewhere inside).
 */
export class Kept {
  /** An array's numbers that print differently: their source text by index (none: a hole or undefined). */
  items: (string | undefined)[] | undefined;
  /**
   * An object's, by key: `[key, text, key, text, ...]`, a Map past `NAMED_PAIRS` of them (most objects
   * have one or two such numbers, and a Map per object is most of what a body of many objects costs).
   */
  named: string[] | Map<string, string> | undefined;
  /** An object's keys in the order the sender wrote them, where JavaScript lists them in another order. */
  order: readonly string[] | undefined;
  constructor(order: readonly string[] | undefined) {
    this.items = undefined;
    this.named = undefined;
    this.order = order;
  }

  hasTexts(): boolean {
    return this.items !== undefined || this.named !== undefined;
  }

  /** The text of the number at `key` (an array's index as a string, `"2"`; `"02"` names no element). */
  text(key: string): string | undefined {
    const { items, named } = this;
    if (items !== undefined) {
      const text: unknown = (items as unknown as Record<string, unknown>)[key];
      return typeof text === "string" ? text : undefined;
    }
    if (named === undefined) return undefined;
    if (!Array.isArray(named)) return named.get(key);
    for (let k = 0; k < named.length; k += 2) if (named[k] === key) return named[k + 1];
    return undefined;
  }

  /** Keeps `text` for an array's element `index`, or (`index` -1) an object's key `name`. */
  setText(index: number, name: string, text: string): void {
    if (index !== -1) {
      if (this.items === undefined) this.items = [];
      this.items[index] = text;
      return;
    }
    const named = this.named;
    if (named === undefined) this.named = [name, text];
    else if (!Array.isArray(named)) named.set(name, text);
    else {
      for (let k = 0; k < named.length; k += 2) {
        if (named[k] === name) {
          named[k + 1] = text;
          return;
        }
      }
      if (named.length < 2 * NAMED_PAIRS) named.push(name, text);
      else this.named = new Map([...this.namedTexts(), [name, text]]);
    }
  }

  dropText(index: number, name: string): void {
    const { items, named } = this;
    if (items !== undefined) {
      if (items[index] !== undefined) items[index] = undefined;
    } else if (named instanceof Map) named.delete(name);
    else if (named !== undefined) {
      for (let k = 0; k < named.length; k += 2) {
        if (named[k] === name) {
          named.splice(k, 2);
          if (named.length === 0) this.named = undefined;
          return;
        }
      }
    }
  }

  /** An object's keys and texts. */
  namedTexts(): [string, string][] {
    const named = this.named;
    if (named === undefined) return [];
    if (!Array.isArray(named)) return [...named];
    const pairs: [string, string][] = [];
    for (let k = 0; k < named.length; k += 2) pairs.push([named[k] as string, named[k + 1] as string]);
    return pairs;
  }
}

/** Past this many, an object's number texts go in a Map. */
const NAMED_PAIRS = 8;

/** A container with a `Kept` somewhere inside but none of its own: one `Kept` shared by all, never changed. */
export const INSIDE = new Kept(undefined);

/** Its constructor returns the object it is given, so a subclass's private field lands on that object. */
class OnObject {
  constructor(object: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the object given is the one the subclass's field is added to.
    return object;
  }
}

/**
 * A container's `Kept`, held in a private field added to the container itself. A WeakMap would do the
 * same, but its entries cost about 1 µs each (with the garbage collector's work on a table that lives as
 * long as the process): a 1 MiB body of 100 000 objects like `{"x": 1.0}` spent 10 times `JSON.parse`'s
 * time on them; a private field costs about as much as adding a property, and nothing can see it
 * (`Object.keys`, `Reflect.ownKeys`, spreading, `structuredClone`, `JSON.stringify` all leave it out).
 */
export class Keeps extends OnObject {
  #kept: Kept;
  private constructor(object: object, kept: Kept) {
    super(object);
    this.#kept = kept;
  }
  static get(container: object): Kept | undefined {
    return #kept in container ? (container as Keeps).#kept : undefined;
  }
  static set(container: object, kept: Kept): void {
    if (#kept in container) (container as Keeps).#kept = kept;
    else new Keeps(container, kept);
  }
}

/** `value` has a `Kept` somewhere inside, itself included: only then is the slower serialization needed. */
export function isTainted(value: object): boolean {
  return Keeps.get(value) !== undefined;
}

/** The source text of the number `holder[key]`, when it prints differently. */
export function keptText(holder: object, key: string): string | undefined {
  return Keeps.get(holder)?.text(key);
}
