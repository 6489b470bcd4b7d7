import { describe, expect, it } from "vitest";
import { combinedSecrets, scrub, scrubberFor, secretListsRead } from "../../../src/io/credentials.js";

/** Stored subscriptions' secrets, as many as a gateway serving thousands of senders holds. */
const subscriptions = (count: number, tag: string) =>
  Object.freeze(Array.from({ length: count }, (_, i) => `whsec-${tag}-${String(i).padStart(5, "0")}`));

/**
 * Each line a stdio server writes is redacted of the connection's credentials and every stored subscription's
 * secret: the list is read whole (joined into the key its scrubber is found by) only when a secret changed, not
 * at each line.
 */
describe("combinedSecrets: one list, and one scrubber, while no secret changed", () => {
  it("the same list and scrubber for two lines; a new list, read once, after the many secrets changed", () => {
    let stored = subscriptions(1000, "a");
    const own = ["pw12345678:SECRETtail99"];
    const secrets = combinedSecrets(
      () => own,
      () => stored,
    );
    const first = secrets();
    const read = secretListsRead();
    expect(scrub("line 1: whsec-a-00007", first)).toBe("line 1: [redacted]");
    expect(scrub("line 2: pw12345678:SECRETtail99", secrets())).toBe("line 2: [redacted]");
    expect(secrets()).toBe(first);
    expect(scrubberFor(secrets())).toBe(scrubberFor(first));
    expect(secretListsRead() - read).toBe(1);

    stored = subscriptions(1000, "b");
    const changed = secrets();
    expect(changed).not.toBe(first);
    expect(scrubberFor(changed)).not.toBe(scrubberFor(first));
    expect(scrub("line 3: whsec-b-00007", secrets())).toBe("line 3: [redacted]");
    expect(scrub("line 4: whsec-b-00008", secrets())).toBe("line 4: [redacted]");
    expect(secretListsRead() - read).toBe(2);
  });

  it("a new list after a token was added to the few in place, also one that took an old token's place", () => {
    // As a login adds its tokens to the connection's credentials (hidingTokens): the same array, changed.
    const own = ["pw12345678:SECRETtail99", "access-token-1"];
    const secrets = combinedSecrets(
      () => own,
      () => subscriptions(3, "c"),
    );
    const first = secrets();
    // A new array of the many secrets at each call: a new list each time, as before.
    expect(secrets()).not.toBe(first);
    const stable = subscriptions(3, "d");
    const steady = combinedSecrets(
      () => own,
      () => stable,
    );
    const before = steady();
    own.push("access-token-2");
    const pushed = steady();
    expect(pushed).not.toBe(before);
    expect(scrub("sent access-token-2", pushed)).toBe("sent [redacted]");
    own.splice(own.indexOf("access-token-1"), 1, "access-token-3");
    expect(own).toHaveLength(3);
    const replaced = steady();
    expect(replaced).not.toBe(pushed);
    expect(scrub("sent access-token-3", replaced)).toBe("sent [redacted]");
    expect(steady()).toBe(replaced);
  });

  it("a list that is not frozen is read at each use, so one changed in place is never redacted with an old scrubber", () => {
    const secrets = ["pw12345678:SECRETtail99"];
    const read = secretListsRead();
    expect(scrub("a pw12345678:SECRETtail99", secrets)).toBe("a [redacted]");
    secrets.push("later-token-9");
    expect(scrub("b later-token-9", secrets)).toBe("b [redacted]");
    expect(secretListsRead() - read).toBe(2);
  });
});
