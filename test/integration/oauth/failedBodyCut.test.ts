import { afterEach, describe, expect, it } from "vitest";
import { lastFailureAt } from "../../../src/actors/oauth/tokenErrors.js";
import { oauthFetches } from "../../../src/io/oauth/fetch.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";

let api: FakeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** A client secret holding a delimiter: its first ten characters are not recognized as one alone. */
const SECRET = "pw12345678:SECRETtail99";

describe("an OAuth endpoint's error answer quoting the credential it was sent where its kept part ends", () => {
  it("keeps its first 2,000 characters once the credential is redacted: none of it is kept in part", async () => {
    // The secret starts at the body's character 1990: the first 2,000 characters end inside it. The run of
    // spaces before it (a page's indentation) is one space in the excerpt an error quotes.
    const head = `{"error":"invalid_client","error_description":"${" ".repeat(1929)}client secret `;
    const body = `${head}${SECRET} is wrong"}`;
    api = await startFakeApi(() => ({
      status: 401,
      headers: { "content-type": "application/json" },
      text: body,
    }));
    const fetches = oauthFetches();
    const endpoint = `${api.url}/token`;
    const res = await fetches.token(endpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: "svc",
        client_secret: SECRET,
      }),
    });
    expect(res.status).toBe(401);
    expect(fetches.failures.map((f) => f.body)).toEqual([`${head}[redacted]`]);
    expect(lastFailureAt(fetches, endpoint)?.excerpt).toBe(
      '{"error":"invalid_client","error_description":" client secret [redacted]',
    );
  });
});
