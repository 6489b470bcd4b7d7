import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { PipelineCtx } from "../../../src/streams/context.js";
import { verifySignature } from "../../../src/streams/signatures.js";
import { authStage, INVALID_SIGNATURE } from "../../../src/streams/stages/auth.js";
import { parseStage } from "../../../src/streams/stages/parse.js";
import { isOutcome } from "../../../src/streams/types.js";

const SECRET = "gitea-secret";
const hex = (text: string) => createHmac("sha256", SECRET).update(text).digest("hex");
// Gitea's JSON (indented, as it sends it) and the form body it posts with content type
// application/x-www-form-urlencoded: url.Values{"payload": {json}}.Encode().
const json = JSON.stringify({ ref: "refs/heads/main", commits: [{ message: "fix: a + b & c" }] }, null, 2);
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

const ctxOf = (body: string, headers: Record<string, string>): PipelineCtx => ({
  inbound: {
    method: "POST",
    path: "/webhooks/gitea",
    routeName: "gitea",
    profile: undefined,
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: Buffer.from(body),
    receivedAt: 1_700_000_000_000,
  },
  route: {
    name: "gitea",
    route: { deliver: "log", deliver_only: false, mirror_to_session: false },
    secret: SECRET,
    profile: "default",
  },
});

const auth = authStage({ verify: verifySignature });
/** Auth then parse, as the pipeline runs them: the answer, or the parsed payload. */
function received(ctx: PipelineCtx): unknown {
  const authed = auth(ctx);
  if (isOutcome(authed)) return authed;
  // A refusal finishes the context, with its reason for the delivery history.
  if (authed.outcome !== undefined) return authed.outcome;
  const parsed = parseStage(authed);
  return isOutcome(parsed) ? parsed : parsed.payload;
}

describe("form-encoded hooks of Gitea, Forgejo and Gogs: the signature covers the JSON in the payload field", () => {
  it("a Gitea delivery (every signature header over the JSON, the form around it unsigned) is its JSON", () => {
    const headers = {
      "x-gitea-event": "push",
      "x-gitea-signature": hex(json),
      "x-gogs-signature": hex(json),
      "x-hub-signature": "sha1=0000",
      "x-hub-signature-256": `sha256=${hex(json)}`,
    };
    expect(received(ctxOf(form({ payload: json }), headers))).toEqual(JSON.parse(json));
    // Gogs sends only its own header.
    expect(received(ctxOf(form({ payload: json }), { "x-gogs-signature": hex(json) }))).toEqual(
      JSON.parse(json),
    );
  });

  it("only the signed field becomes the payload: a body that is JSON itself around it is not read", () => {
    // Valid JSON whose text also holds a payload= field with a captured signed JSON.
    const smuggled = `{"ref":"refs/heads/evil","x":"&${form({ payload: json })}&"}`;
    expect(received(ctxOf(smuggled, { "x-gitea-signature": hex(json) }))).toEqual(JSON.parse(json));
  });

  it("a wrong signature, or another scheme's over the field, is 401", () => {
    const body = form({ payload: json });
    expect(received(ctxOf(body, { "x-gitea-signature": hex("other") }))).toBe(INVALID_SIGNATURE);
    expect(received(ctxOf(body, { "x-webhook-signature": hex(json) }))).toBe(INVALID_SIGNATURE);
    // GitHub's header alone is a signature of the body it sends (GitHub signs the form), as before.
    expect(received(ctxOf(body, { "x-hub-signature-256": `sha256=${hex(json)}` }))).toBe(INVALID_SIGNATURE);
    // Not a form: the field is never looked for.
    expect(
      received(ctxOf(body, { "content-type": "application/json", "x-gitea-signature": hex(json) })),
    ).toBe(INVALID_SIGNATURE);
  });

  it("GitHub's form hooks, signed over the form body it sends, pass as before", () => {
    const body = form({ payload: json });
    expect(received(ctxOf(body, { "x-hub-signature-256": `sha256=${hex(body)}` }))).toEqual(JSON.parse(json));
  });
});
