import { renameSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { githubExample } from "../../helpers/githubExamples.js";
import { postJson } from "../../helpers/http.js";

/** Spec 2.3 `in_file`: the list is cached, but only until the file changes. */
describe("in_file lists are re-read when the file changes", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      files: { "lists/senders.txt": "Codertocat\n" },
      config: webhookConfig(
        {
          allow: {
            secret: "INSECURE_NO_AUTH",
            events: ["issues"],
            filters: [{ field: "sender.login", in_file: "lists/senders.txt" }],
          },
        },
        { rate_limit: 1000 },
      ),
    });
  });
  afterAll(() => gw.stop());

  const list = () => join(gw.home.dir, "lists", "senders.txt");
  const issueBy = (login: string) => {
    const payload = githubExample("issues", "opened");
    payload.sender.login = login;
    return postJson(gw.url("/webhooks/allow"), payload, { "X-GitHub-Event": "issues" });
  };

  it("a same-size rewrite within one coarse timestamp tick (same inode, size and mtime) is seen", async () => {
    // A whole-second mtime just behind the clock: what a filesystem with coarse timestamps records.
    const tick = new Date(Math.floor(Date.now() / 1000) * 1000);
    writeFileSync(list(), "Codertocat\n");
    utimesSync(list(), tick, tick);
    expect((await issueBy("Codertocat")).status).toBe(202);
    expect((await issueBy("Octocatxxx")).body).toEqual({ status: "ignored", reason: "filter" });

    writeFileSync(list(), "Octocatxxx\n"); // same inode, same size
    utimesSync(list(), tick, tick); // same mtime: the metadata alone cannot tell
    expect((await issueBy("Octocatxxx")).status).toBe(202);
    expect((await issueBy("Codertocat")).body).toEqual({ status: "ignored", reason: "filter" });
  });

  it("an atomic replace (a same-size file renamed over the list, mtime kept) is seen at once", async () => {
    // Old enough that the metadata is trusted: only the new inode tells the lists apart.
    const old = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
    writeFileSync(list(), "Codertocat\n");
    utimesSync(list(), old, old);
    expect((await issueBy("Codertocat")).status).toBe(202);
    writeFileSync(`${list()}.tmp`, "Hubot-bot\n\n");
    utimesSync(`${list()}.tmp`, old, old);
    renameSync(`${list()}.tmp`, list());
    expect((await issueBy("Hubot-bot")).status).toBe(202);
    expect((await issueBy("Codertocat")).body).toEqual({ status: "ignored", reason: "filter" });
  });
});
