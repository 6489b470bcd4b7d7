import { describe, expect, it } from "vitest";
import type { McpServerEntry } from "../../../src/config/sections/mcp.js";
import {
  entrySecrets,
  referencedSecrets,
  writtenInlineCredentials,
} from "../../../src/io/mcp/entrySecrets.js";

const entry = (fields: Record<string, unknown>) => fields as unknown as McpServerEntry;

describe("entrySecrets: the credentials a rendered MCP entry carries", () => {
  it("header tokens, credential-named env and query values, the url password, OAuth and key passwords", () => {
    expect(
      entrySecrets(
        entry({
          url: "https://bob:pa%24%24word@mcp.example/mcp?api_key=k-123456&format=json",
          headers: { Authorization: "Bearer tok-abcdef", "X-Api-Key": "raw-key-value" },
          oauth: { client_secret: "cs-987654" },
          client_cert: ["/c.pem", "/k.pem", "keypass-1"],
        }),
      ),
    ).toEqual(["tok-abcdef", "raw-key-value", "pa$$word", "k-123456", "cs-987654", "keypass-1"]);
  });

  it("a value written with spaces around it is hidden as sent too: without them", () => {
    expect(
      entrySecrets(
        entry({
          url: "https://mcp.example/mcp",
          headers: { "X-Api-Key": " raw-key-value\t", Authorization: "Bearer tok-abcdef " },
          env: { API_KEY: " a1-key " },
        }),
      ),
    ).toEqual([" raw-key-value\t", "tok-abcdef", " a1-key ", "raw-key-value", "a1-key"]);
  });

  it("a url password holding a % not followed by two hex digits: as it is sent (as written), and the query's key too", () => {
    // decodeURIComponent threw on it, which dropped the password and every credential query value after it.
    expect(entrySecrets(entry({ url: "https://bob:p%zz-w%41rd@mcp.example/mcp?api_key=k-123456" }))).toEqual([
      "p%zz-wArd",
      "k-123456",
    ]);
  });

  it("env: only credential-named values (API_KEY, GITHUB_TOKEN, DB_PASSWORD), not NODE_ENV or a path", () => {
    expect(
      entrySecrets(
        entry({
          command: "node",
          env: { API_KEY: "a1", GITHUB_TOKEN: "g2", DB_PASSWORD: "p3", NODE_ENV: "production", ROOT: "/srv" },
        }),
      ),
    ).toEqual(["a1", "g2", "p3"]);
  });

  it("a URL's password inside any env value or argument", () => {
    expect(
      entrySecrets(
        entry({
          command: "x",
          args: ["--db", "mysql://u:p%40ss@h/d"],
          env: { DATABASE_URL: "postgres://a:pw1@h/d" },
        }),
      ),
    ).toEqual(["pw1", "p@ss"]);
  });

  it("credential-named query values of a URL inside any env value or argument, not other query values", () => {
    expect(
      entrySecrets(
        entry({
          command: "x",
          args: ["--endpoint", "https://api.example/v1?api_key=qk-arg-41&region=eu", "--page=2"],
          env: {
            DATABASE_URL: "postgresql://db.example/app?user=app&password=pg-query-42",
            CALLBACK: "see https://hooks.example/in?sig_token=st-43 and more",
            PLAIN: "https://example.org/?q=kept",
          },
        }),
      ),
    ).toEqual(["pg-query-42", "st-43", "qk-arg-41"]);
  });

  it("the value of a credential-named option: --api-key <key>, --token=<token>, not other options' values", () => {
    expect(
      entrySecrets(
        entry({
          command: "npx",
          args: [
            "-y",
            "@upstash/context7-mcp",
            "--api-key",
            "ctx7sk-1",
            "--auth-token=at-2",
            "--port",
            "8080",
          ],
        }),
      ),
    ).toEqual(["ctx7sk-1", "at-2"]);
    // An option followed by another option has no value of its own.
    expect(entrySecrets(entry({ command: "x", args: ["--token", "--verbose", "--key="] }))).toEqual([]);
  });

  it("also in a whole command line written in command (its command-not-found message and Testing line quote it)", () => {
    expect(
      entrySecrets(
        entry({
          command: "npx -y @upstash/context7-mcp --api-key ctx7sk-9 postgres://u:pw-77@db/x",
          args: [],
        }),
      ),
    ).toEqual(["pw-77", "ctx7sk-9"]);
    expect(entrySecrets(entry({ command: "npx", args: [] }))).toEqual([]);
  });

  it("an Authorization header's credentials after any scheme (Key, Api-Key, SSWS), and a Basic header's password", () => {
    const basic = Buffer.from("deploy-bot:basic-pw-7d3c9a").toString("base64");
    expect(
      entrySecrets(
        entry({
          url: "https://mcp.example/mcp",
          headers: { Authorization: "Key fal-key-5e4d3c2b1a" },
        }),
      ),
    ).toEqual(["fal-key-5e4d3c2b1a"]);
    expect(
      entrySecrets(entry({ url: "https://mcp.example/mcp", headers: { authorization: `Basic ${basic}` } })),
    ).toEqual([basic, "basic-pw-7d3c9a"]);
    expect(
      entrySecrets(
        entry({ url: "https://mcp.example/mcp", headers: { "Proxy-Authorization": "SSWS okta-00aabbccdd" } }),
      ),
    ).toEqual(["okta-00aabbccdd"]);
    // Another header keeps its whole value, a scheme-less Authorization too.
    expect(
      entrySecrets(
        entry({
          url: "https://mcp.example/mcp",
          headers: { "X-Team": "Key team-one", Authorization: "raw-key-42" },
        }),
      ),
    ).toEqual(["Key team-one", "raw-key-42"]);
  });
});

describe("referencedSecrets: values ${VAR} takes from .env, or from credential-named environment variables", () => {
  it("takes every .env value the entry references, a credential-named environment one, not HOME", () => {
    const raw = entry({ command: "x", args: ["${A}", "${env:HOME}"], env: { X: "${B}-${GITHUB_TOKEN}" } });
    const scope = {
      secrets: { A: "from-env-file", B: "b-value" },
      env: { HOME: "/home/me", GITHUB_TOKEN: "ghp_1" },
    };
    expect(referencedSecrets(raw, scope)).toEqual(["from-env-file", "b-value", "ghp_1"]);
  });
});

describe("writtenInlineCredentials: credentials an entry as written holds in a URL or an argument", () => {
  it("names the url's password and credential query values, an argument's or env value's URL password", () => {
    expect(
      writtenInlineCredentials({
        url: "https://bob:pw-1@mcp.example/mcp?api_key=k-1&format=json",
        args: [
          "-y",
          "@modelcontextprotocol/server-postgres",
          "postgresql://u:pg-pw@localhost/db",
          "--api-key",
          "k-2",
        ],
        env: { DATABASE_URL: "mysql://root:db-pw@db/app", API_TOKEN: "counted by its name elsewhere" },
      }),
    ).toEqual([
      "url (its password)",
      "url (its ?api_key=)",
      "args[2] (a URL's password)",
      "args[4] (an option's credential)",
      "env.DATABASE_URL (a URL's password)",
    ]);
  });

  it("a ${VAR} in their place, a URL without a password or a name that is no credential: none", () => {
    expect(
      writtenInlineCredentials({
        url: "https://bob:${MCP_PW}@mcp.example/mcp?api_key=${API_KEY}&page=2",
        args: [
          "postgresql://u:${PG_PW}@localhost/db",
          "https://example.com/x",
          "--port=5",
          "--api-key",
          "${KEY}",
        ],
        env: { DATABASE_URL: "postgresql://u@localhost/db" },
      }),
    ).toEqual([]);
  });
});
