import { describe, expect, it } from "vitest";
import { secretCharacterWarnings, storedSecretVariableProblem } from "../../../src/config/secretWarnings.js";
import { subscriptionWarnings } from "../../../src/gateway/idleRouteKeys.js";
import { parseSubscription } from "../../../src/io/stores/subscriptions.js";

const FILE = "/home/u/.svc/config.yaml";

describe("a secret that token senders can never match is named at startup", () => {
  it("names the key of a route's own secret outside printable ASCII, never the secret", () => {
    const warnings = secretCharacterWarnings(
      [{ name: "gl", secret: "sekérit", route: { secret: "sekérit" } }],
      FILE,
    );
    expect(warnings).toEqual([
      `[webhook] ${FILE}: platforms.webhook.routes.gl.secret has a character outside printable ASCII, so a sender that sends the secret itself (X-Gitlab-Token, Authorization: Bearer) is always answered 401; HMAC signatures and Basic credentials still verify — use a printable ASCII secret without edge spaces (svc gateway setup generates one) if this route takes tokens`,
    ]);
    expect(warnings.join("\n")).not.toContain("sekérit");
  });

  it("names the global secret for a route that falls back to it", () => {
    const [warning] = secretCharacterWarnings([{ name: "any", secret: "tab\there", route: {} }], FILE);
    expect(warning).toContain(
      `${FILE}: platforms.webhook.secret (the global secret or WEBHOOK_SECRET, which overrides it; route any uses it) has a character`,
    );
  });

  it("names a secret with a space at either end (HTTP strips it from a token header), never the secret", () => {
    const [warning] = secretCharacterWarnings(
      [{ name: "gl", secret: "tok123 ", route: { secret: "tok123 " } }],
      FILE,
    );
    expect(warning).toContain(
      "platforms.webhook.routes.gl.secret begins or ends with a space, which HTTP strips from a header's value",
    );
    expect(warning).not.toContain("tok123");
  });

  it("names INSECURE_NO_AUTH spelt otherwise than in capitals, which is taken as a real secret", () => {
    const warnings = secretCharacterWarnings(
      [
        { name: "a", secret: "insecure_no_auth", route: { secret: "insecure_no_auth" } },
        { name: "b", secret: " INSECURE_NO_AUTH", route: { secret: " INSECURE_NO_AUTH" } },
      ],
      FILE,
    );
    expect(warnings).toEqual([
      `[webhook] ${FILE}: platforms.webhook.routes.a.secret is "insecure_no_auth", which is not INSECURE_NO_AUTH (the value that turns the signature check off is written exactly so, in capitals): it is taken as a real secret, one anyone can guess, and every request must be signed or sent with it — write INSECURE_NO_AUTH to check nothing (loopback binds only), or set a real secret (svc gateway setup generates one)`,
      expect.stringContaining(
        'platforms.webhook.routes.b.secret is " INSECURE_NO_AUTH", which is not INSECURE_NO_AUTH',
      ),
    ]);
  });

  it("is silent for printable ASCII secrets and INSECURE_NO_AUTH", () => {
    expect(
      secretCharacterWarnings(
        [
          { name: "a", secret: "plain-secret ~!", route: { secret: "plain-secret ~!" } },
          { name: "b", secret: "INSECURE_NO_AUTH", route: { secret: "INSECURE_NO_AUTH" } },
        ],
        FILE,
      ),
    ).toEqual([]);
  });
});

describe("a secret written $NAME (a variable without braces, which svc does not replace) is named at startup", () => {
  it("names the key and the fix, never the value; a $ inside a longer secret is no variable", () => {
    const warnings = secretCharacterWarnings(
      [
        { name: "gh", secret: "$GH_SECRET", route: { secret: "$GH_SECRET" } },
        { name: "d", secret: "$WS", route: {} },
        { name: "ok", secret: "a$GH_SECRET", route: { secret: "a$GH_SECRET" } },
      ],
      FILE,
    );
    expect(warnings).toEqual([
      `[webhook] ${FILE}: platforms.webhook.routes.gh.secret is a $ followed by a name, as a shell or docker compose writes a variable, but svc replaces only $\{NAME} (with braces): the text itself is the secret, so every signature and token from a sender keyed with the variable's value is answered 401 — write it as $\{NAME}, in quotes (secret: "$\{NAME}")`,
      expect.stringContaining(
        `${FILE}: platforms.webhook.secret (the global secret or WEBHOOK_SECRET, which overrides it; route d uses it) is a $ followed by a name`,
      ),
    ]);
    expect(warnings.join("\n")).not.toMatch(/GH_SECRET|\$WS/);
  });
});

describe("a whpk_ public key that encodes no Ed25519 key is named at startup", () => {
  it("names the key, never the value; a 32-byte key gets no warning", () => {
    const bad = `whpk_${Buffer.alloc(31, 7).toString("base64")}`;
    expect(secretCharacterWarnings([{ name: "sw", secret: bad, route: { secret: bad } }], FILE)).toEqual([
      `[webhook] ${FILE}: platforms.webhook.routes.sw.secret starts with whpk_ (a Standard Webhooks public key) but the rest is not the base64 of a 32-byte Ed25519 key, so every request is answered 401 — copy the sender's whpk_ key whole`,
    ]);
    const good = `whpk_${Buffer.from("11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=", "base64").toString("base64")}`;
    expect(secretCharacterWarnings([{ name: "sw", secret: good, route: { secret: good } }], FILE)).toEqual(
      [],
    );
  });
});

describe("a secret with a line break at either end is named as such (no sender can sign with it)", () => {
  it("says every request is answered 401, not that HMAC signatures still verify; never the secret", () => {
    for (const secret of ["gh-hook-7Qw2\n", "gh-hook-7Qw2\r\n", "\ngh-hook-7Qw2"]) {
      const warnings = secretCharacterWarnings([{ name: "gh", secret, route: { secret } }], FILE);
      expect(warnings).toEqual([
        `[webhook] ${FILE}: platforms.webhook.routes.gh.secret begins or ends with a line break (a YAML | block, or a value read from a file with its final newline), which no sender's secret field holds, so every signature and token is answered 401 — remove the line break (write the value on the key's line, or |- in YAML; strip the file's last newline)`,
      ]);
      expect(warnings.join("\n")).not.toContain("gh-hook-7Qw2");
    }
  });
});

describe("a subscription's secret written as a variable, which the subscription store never replaces", () => {
  it("is named for ${NAME}, ${NAME:-x} and a whole $NAME, never quoting the value; other secrets pass", () => {
    for (const secret of ["${GH_SECRET}", "${GH_SECRET:-dev}", "$GH_SECRET", "pre-${X}"])
      expect(storedSecretVariableProblem(secret, "ci")).toMatch(
        /^is written as a variable \(\$\{NAME\} or \$NAME\), but a subscription's values are taken as written .* answered 401 — store the secret itself: svc webhook subscribe ci --secret "\$NAME" \(the shell replaces it\)$/,
      );
    for (const secret of ["a3f$9", "s3cr3t", "$", "${}", "whsec_abc"])
      expect(storedSecretVariableProblem(secret, "ci")).toBeUndefined();
  });

  it("is one of the warnings the gateway logs at each load of the subscriptions", () => {
    const parsed = parseSubscription("subs.json", "ci", { secret: "${GH_SECRET}" });
    if (!parsed.ok) throw new Error(parsed.problems.join("; "));
    expect(subscriptionWarnings(parsed.value, "ci")).toEqual([
      `secret ${storedSecretVariableProblem("${GH_SECRET}", "ci")}`,
    ]);
  });
});

describe("a subscription's whpk_ secret that is no 32-byte Ed25519 key", () => {
  it("is one of the warnings the gateway logs at each load of the subscriptions, as for a config.yaml route", () => {
    const parsed = parseSubscription("subs.json", "sw", { secret: "whpk_abc" });
    if (!parsed.ok) throw new Error(parsed.problems.join("; "));
    expect(subscriptionWarnings(parsed.value, "sw")).toEqual([
      "secret starts with whpk_ (a Standard Webhooks public key) but the rest is not the base64 of a 32-byte Ed25519 key, so every request is answered 401 — copy the sender's whpk_ key whole",
    ]);
  });
});

describe("a subscription's secret that token senders can never match, at each load of the gateway", () => {
  it("names an edge space or a line break at an end, as svc config check does (never quoting the value)", () => {
    const warningsFor = (secret: string) => {
      const parsed = parseSubscription("subs.json", "gl", { secret });
      if (!parsed.ok) throw new Error(parsed.problems.join("; "));
      return subscriptionWarnings(parsed.value, "gl");
    };
    expect(warningsFor(" abc")).toEqual([
      "secret begins or ends with a space, which HTTP strips from a header's value, so a sender that sends the secret itself (X-Gitlab-Token, Authorization: Bearer) is always answered 401; HMAC signatures still verify — svc webhook subscribe gl --secret <printable ASCII> if this route takes tokens",
    ]);
    expect(warningsFor("abc\n")).toEqual([expect.stringMatching(/^secret begins or ends with a line break/)]);
    expect(warningsFor("abc")).toEqual([]);
  });
});

/**
 * A `whsec_` secret is the base64 of a Standard Webhooks or Svix signing key: one whose rest is no base64
 * (a character pasted along with it, `-` or `_`) encodes no key, so no such signature ever verifies.
 */
describe("a whsec_ secret that encodes no signing key is named at startup", () => {
  const PROBLEM =
    "starts with whsec_ (a Standard Webhooks or Svix signing secret) but the rest is not base64, so no Standard Webhooks or Svix signature verifies with it (Stripe's and the other HMAC schemes, keyed with the whole text, still do) — copy the sender's whsec_ secret whole";

  it("names the key, never the value; base64 of any length, padded or not, gets no warning", () => {
    for (const bad of [
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa-w",
      "whsec_ MfKQ9r8GKYqr",
      "whsec_",
      "whsec_A",
    ]) {
      const warnings = secretCharacterWarnings([{ name: "svix", secret: bad, route: { secret: bad } }], FILE);
      expect(warnings).toEqual([`[webhook] ${FILE}: platforms.webhook.routes.svix.secret ${PROBLEM}`]);
      expect(warnings.join("\n")).not.toContain("MfKQ9r8");
    }
    for (const good of [
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      "whsec_dGVzdA",
      "whsec_dGVzdA==",
      "whsec_topsecret",
    ])
      expect(
        secretCharacterWarnings([{ name: "svix", secret: good, route: { secret: good } }], FILE),
      ).toEqual([]);
  });

  it("is one of the warnings the gateway logs at each load of the subscriptions", () => {
    const parsed = parseSubscription("subs.json", "svix", { secret: "whsec_abc-def" });
    if (!parsed.ok) throw new Error(parsed.problems.join("; "));
    expect(subscriptionWarnings(parsed.value, "svix")).toEqual([`secret ${PROBLEM}`]);
  });
});
