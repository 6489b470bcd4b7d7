import { homedir } from "node:os";
import { basename, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { interpolate } from "../../../src/config/interpolate.js";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { childEnvironment } from "../../../src/io/mcp/childEnv.js";
import { renderEntry } from "../../../src/io/mcp/render.js";

const scope = {
  secrets: { TOKEN: "from-dotenv", SHARED: "dotenv-wins" },
  env: { SHARED: "env", ONLY_ENV: "env-only" },
  workspaceFolder: "/work/space",
};
const parse = (raw: Record<string, unknown>) => mcpServerSchema.parse(raw);

describe("interpolation at connect time (spec 2.3)", () => {
  it("renders ${VAR} and ${env:VAR} from the secret scope first, then the environment", () => {
    const out = renderEntry(
      "s",
      parse({ command: "x", args: ["${TOKEN}", "${env:SHARED}", "${ONLY_ENV}"] }),
      scope,
    );
    expect(out.args).toEqual(["from-dotenv", "dotenv-wins", "env-only"]);
  });

  it("renders the context variables", () => {
    const out = renderEntry(
      "s",
      parse({
        command: "x",
        args: [
          "${userHome}",
          "${workspaceFolder}",
          "${workspaceFolderBasename}",
          "a${pathSeparator}b",
          "c${/}d",
        ],
      }),
      scope,
    );
    expect(out.args).toEqual([homedir(), "/work/space", basename("/work/space"), `a${sep}b`, `c${sep}d`]);
  });

  it("a fallback may itself be a variable, nested as docker compose nests them, and ${env:NAME:-fallback} takes one too", () => {
    const out = renderEntry(
      "s",
      parse({
        command: "x",
        args: ["${NOPE:-${TOKEN}}", "${NOPE:-${NOPE_TOO:-inner}}", "${env:NOPE:-d1}", "${env:ONLY_ENV:-d2}"],
      }),
      scope,
    );
    expect(out.args).toEqual(["from-dotenv", "inner", "d1", "env-only"]);
  });

  it("a context variable with a fallback is the context value (it is always set); ${env:...} is the environment's", () => {
    const out = renderEntry(
      "s",
      parse({
        command: "x",
        args: ["${userHome:-/nowhere}", "${workspaceFolder:-.}", "${env:userHome:-none}"],
      }),
      scope,
    );
    expect(out.args).toEqual([homedir(), "/work/space", "none"]);
  });

  it("a context variable's fallback never applies, even where it is empty: ${workspaceFolderBasename} in / (a gateway under systemd without WorkingDirectory=)", () => {
    const root = { ...scope, workspaceFolder: sep };
    const out = renderEntry(
      "s",
      parse({
        command: "x",
        args: ["${workspaceFolderBasename:-fb}", "[${workspaceFolderBasename}]", "${workspaceFolder:-fb}"],
        env: { NAME: "${workspaceFolderBasename:-${NOPE}}" },
      }),
      root,
    );
    expect(out.args).toEqual(["", "[]", sep]);
    expect(out.env.NAME).toBe("");
    // The fallback is not rendered either: its variables are not looked up, so none is named as unset.
    expect(interpolate("${workspaceFolderBasename:-${NOPE}}", root)).toEqual({ value: "", unresolved: [] });
    // ${env:NAME:-fallback} names the environment's variable, where the fallback applies as for any other.
    expect(interpolate("${env:workspaceFolderBasename:-fb}", root).value).toBe("fb");
  });

  it("names every unset variable of url and headers in one message", () => {
    expect(() =>
      renderEntry(
        "gh",
        parse({
          url: "https://${HOST}/mcp",
          headers: { Authorization: "Bearer ${NOPE}", "X-Team": "${TEAM}" },
        }),
        scope,
      ),
    ).toThrow(
      "mcp_servers.gh: ${HOST} in url; ${NOPE} in headers.Authorization; ${TEAM} in headers.X-Team are not set — add HOST=..., NOPE=..., TEAM=... to the profile's .env or the environment (the next connect picks them up)",
    );
  });

  it("a shell's form svc does not read (TOKEN-x, TOKEN:=x, spaces inside the braces) is named as such, with the variable to write, not as another client's", () => {
    const braces = (inner: string) => `\${${inner}}`;
    for (const inner of ["GH_TOKEN_Q-dflt", "GH_TOKEN_Q:=dflt", "GH_TOKEN_Q:?missing", " GH_TOKEN_Q "]) {
      const form = braces(inner);
      expect(() =>
        renderEntry("gh", parse({ url: "https://h", headers: { Authorization: `Bearer ${form}` } }), scope),
      ).toThrow(
        `mcp_servers.gh.headers.Authorization: ${form} is not set — ${form} is not a variable form svc reads: write ${braces("GH_TOKEN_Q")} (or ${braces("GH_TOKEN_Q:-fallback")}) and set GH_TOKEN_Q in the profile's .env or the environment (the next connect picks it up)`,
      );
    }
  });

  it("another client's variable (VS Code's ${input:...}, kept by svc mcp import) is not advised to be added to .env, which cannot set it", () => {
    expect(() =>
      renderEntry(
        "gh",
        parse({ url: "https://h", headers: { Authorization: "Bearer ${input:tok}" } }),
        scope,
      ),
    ).toThrow(
      "mcp_servers.gh.headers.Authorization: ${input:tok} is not set — write ${NAME} in place of ${input:tok} (a variable of another client, which svc does not render and no .env line can set) and add NAME=... to the profile's .env or the environment (the next connect picks it up)",
    );
    expect(() =>
      renderEntry("gh", parse({ url: "https://${HOST}/mcp", headers: { A: "${input:tok}" } }), scope),
    ).toThrow(
      /are not set — write \$\{NAME\} in place of \$\{input:tok\} \(a variable of another client, .*; add HOST=\.\.\. to the profile's \.env/,
    );
  });

  it("a ${env:} or ${} with the name left out is quoted as written and asked for its name, not taken for another client's", () => {
    for (const written of ["${env:}", "${}"]) {
      expect(() =>
        renderEntry("u4", parse({ url: "https://h", headers: { "X-Key": written } }), scope),
      ).toThrow(
        `mcp_servers.u4.headers.X-Key: ${written} is not set — write \${NAME} in place of ${written} (it names no variable) and add NAME=... to the profile's .env or the environment (the next connect picks it up)`,
      );
    }
    expect(interpolate("a${env:}b", scope)).toEqual({ value: "a${env:}b", unresolved: ["env:"] });
    expect(() =>
      renderEntry("u4", parse({ url: "https://${HOST}/mcp", headers: { A: "${env:}" } }), scope),
    ).toThrow(
      "mcp_servers.u4: ${HOST} in url; ${env:} in headers.A are not set — write ${NAME} in place of ${env:} (it names no variable) and add NAME=... to the profile's .env or the environment; add HOST=... to the profile's .env or the environment (the next connect picks them up)",
    );
  });

  it("keeps an unset variable literally outside url and headers", () => {
    const out = renderEntry(
      "s",
      parse({ command: "x", env: { K: "${MISSING}" }, headers: { H: "${MISSING}" } }),
      scope,
    );
    expect(out.env.K).toBe("${MISSING}");
    expect(out.headers.H).toBe("${MISSING}");
  });

  it("fails closed on an unset variable in a remote url or header, naming it", () => {
    expect(() => renderEntry("gh", parse({ url: "https://h/${MISSING}" }), scope)).toThrow(
      /mcp_servers\.gh\.url: \$\{MISSING\} is not set/,
    );
    expect(() =>
      renderEntry("gh", parse({ url: "https://h", headers: { Authorization: "Bearer ${NOPE}" } }), scope),
    ).toThrow(/mcp_servers\.gh\.headers\.Authorization: \$\{NOPE\} is not set/);
    expect(
      renderEntry("gh", parse({ url: "https://h", headers: { Authorization: "Bearer ${TOKEN}" } }), scope)
        .headers.Authorization,
    ).toBe("Bearer from-dotenv");
  });

  it("a header value fetch cannot send (a character outside Latin-1) fails naming the key, never the value", () => {
    const entry = parse({ url: "https://h", headers: { "X-Team": "Café Zürich", "X-Key": "k€y-1234" } });
    expect(
      renderEntry("gh", parse({ url: "https://h", headers: { "X-Team": "Café Zürich" } }), scope).headers,
    ).toEqual({ "X-Team": "Café Zürich" });
    expect(() => renderEntry("gh", entry, scope)).toThrow(
      "mcp_servers.gh.headers.X-Key: the value contains a character an HTTP header cannot carry (one outside Latin-1, such as € or an emoji) — write it in ASCII, percent-encoded if the server decodes it (check it, not shown here, in config.yaml or the profile's .env)",
    );
    const fromEnv = { ...scope, secrets: { ...scope.secrets, EMOJI_TOKEN: "tok-🔑-9" } };
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    const rendered = parse({ url: "https://h", headers: { Authorization: "Bearer ${EMOJI_TOKEN}" } });
    expect(() => renderEntry("gh", rendered, fromEnv)).toThrow(
      /^mcp_servers\.gh\.headers\.Authorization: the value rendered from \$\{\.\.\.\} contains a character an HTTP header cannot carry/,
    );
    expect(() => renderEntry("gh", rendered, fromEnv)).not.toThrow(/🔑/);
  });

  it("a header value with a control character undici refuses (ESC, DEL) fails naming the key, never the value", () => {
    // undici sends a tab, and refuses every other control character with only "invalid x-key header".
    expect(
      renderEntry("gh", parse({ url: "https://h", headers: { "X-Key": "a\tb" } }), scope).headers,
    ).toEqual({
      "X-Key": "a\tb",
    });
    for (const bad of ["sk-1234\u001b[0m", "sk-1234\u007f", "sk-\u00011234"]) {
      const entry = parse({ url: "https://h", headers: { "X-Key": bad } });
      expect(() => renderEntry("gh", entry, scope)).toThrow(
        "mcp_servers.gh.headers.X-Key: the value contains a control character (such as an escape or DEL), which an HTTP header cannot carry — check it (not shown here) in config.yaml or the profile's .env",
      );
      expect(() => renderEntry("gh", entry, scope)).not.toThrow(/sk-/);
    }
  });

  it("leaves out the headers the HTTP client sets itself, never rendering them (undici drops, refuses or hangs on them)", () => {
    const entry = parse({
      url: "https://h",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      headers: {
        Host: "${UNSET_HOST}",
        "content-length": "5",
        Expect: "100-continue",
        "Keep-Alive": "x",
        Upgrade: "h2c",
        "Transfer-Encoding": "chunked",
        "Mcp-Session-Id": "1868a90c",
        "MCP-Protocol-Version": "2025-06-18",
        "X-Ok": "1",
      },
    });
    expect(renderEntry("gh", entry, scope).headers).toEqual({ "X-Ok": "1" });
    // A command server's headers are not sent at all; they stay as written.
    expect(renderEntry("s", parse({ command: "x", headers: { Host: "h" } }), scope).headers).toEqual({
      Host: "h",
    });
  });

  it("a NUL in a stdio server's args or env fails the connect naming the key, never the value (spawn would quote it)", () => {
    const nul = { ...scope, secrets: { ...scope.secrets, NUL_TOKEN: "sk-12\u000034" } };
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    const entry = parse({ command: "srv", args: ["--x"], env: { TOKEN: "${NUL_TOKEN}" } });
    expect(() => renderEntry("s", entry, nul)).toThrow(
      "mcp_servers.s.env.TOKEN: the value contains a NUL character, which a process's arguments and environment cannot carry — check it (not shown here) in config.yaml or the profile's .env",
    );
    expect(() => renderEntry("s", entry, nul)).not.toThrow(/sk-12/);
    expect(() => renderEntry("s", parse({ command: "srv", args: ["ok", "a\u0000b"] }), scope)).toThrow(
      /^mcp_servers\.s\.args\[1\]: the value contains a NUL character/,
    );
  });

  it("expands ~ in command, args and certificate paths", () => {
    const out = renderEntry(
      "s",
      parse({ url: "https://h", ssl_verify: "~/ca.pem", client_cert: ["~/c.pem", "~/k.pem", "pw"] }),
      scope,
    );
    expect(out.ssl_verify).toBe(`${homedir()}/ca.pem`);
    expect(out.client_cert).toEqual([`${homedir()}/c.pem`, `${homedir()}/k.pem`, "pw"]);
    const stdio = renderEntry("s", parse({ command: "~/bin/srv", args: ["~/data"] }), scope);
    expect(stdio.command).toBe(`${homedir()}/bin/srv`);
    expect(stdio.args).toEqual([`${homedir()}/data`]);
  });
});

describe("stdio child environment", () => {
  it("passes the allow-list, LC_* and XDG_*, plus env; never other parent variables", () => {
    const env = childEnvironment(
      { EXTRA: "1" },
      {
        PATH: "/bin",
        HOME: "/h",
        LANG: "C",
        LC_CTYPE: "UTF-8",
        XDG_CONFIG_HOME: "/h/.config",
        SECRET_TOKEN: "x",
        OPENAI_API_KEY: "y",
        FN: "() { :; }",
      },
    );
    expect(env).toEqual({
      PATH: "/bin",
      HOME: "/h",
      LANG: "C",
      LC_CTYPE: "UTF-8",
      XDG_CONFIG_HOME: "/h/.config",
      EXTRA: "1",
    });
  });
});

describe("a url a ${VAR} set to an empty value leaves no URL", () => {
  it("names the variable and its empty value, which the url as written does not show", () => {
    const empty = { secrets: { MCP_BASE_EMPTY: "", TOKEN: "from-dotenv" }, env: {} };
    expect(() => renderEntry("s", parse({ url: "${MCP_BASE_EMPTY}/mcp" }), empty)).toThrow(
      'mcp_servers.s.url: expected an http:// or https:// URL, got "${MCP_BASE_EMPTY}/mcp" — ${MCP_BASE_EMPTY} is set to an empty value (a line MCP_BASE_EMPTY= in the profile\'s .env, or an empty variable of the environment)',
    );
    // A url wrong for another reason says nothing of variables that are set.
    expect(() => renderEntry("s", parse({ url: "ftp://${TOKEN}/mcp" }), empty)).toThrow(
      /^mcp_servers\.s\.url: expected an http:\/\/ or https:\/\/ URL, got "ftp:\/\/\$\{TOKEN\}\/mcp" \(ftp is not supported\)$/,
    );
  });
});

describe("a url's user:password@ holding characters a password generator writes", () => {
  const withPassword = (password: string) => ({ secrets: { MCP_PW: password }, env: {} });
  const basic = (credentials: string) => `Basic ${Buffer.from(credentials, "utf8").toString("base64")}`;

  it("a % not followed by two hex digits is sent as written, as curl and httpx read it, not failed as 'URI malformed'", () => {
    const out = renderEntry("s", parse({ url: "http://me:${MCP_PW}@h/mcp" }), withPassword("p%zz-w%41rd%"));
    expect(out.url).toBe("http://h/mcp");
    // %41 is an encoded "A"; the others are no escape and stay.
    expect(out.headers.Authorization).toBe(basic("me:p%zz-wArd%"));
  });

  it.each(["/", "?", "#"])(
    "a %s in the password (from .env) is named with the fix, the password not shown",
    (c) => {
      const password = `s3cr${c}t-value`;
      let message = "";
      try {
        renderEntry("s", parse({ url: "http://me:${MCP_PW}@h/mcp" }), withPassword(password));
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toBe(
        `mcp_servers.s.url: its user:password@ holds "${c}", which ends the host part of a URL (so the url reads as another host) — write it percent-encoded (/ as %2F, ? as %3F, # as %23, and a % as %25), or leave user:password@ out and send the credentials in an Authorization header under headers`,
      );
    },
  );

  it("a url wrong for another reason with an @ in its path or query is not taken for one with user:password@", () => {
    const checked = mcpServerSchema.safeParse({
      url: "http://mcp.example.com:99999/mcp?email=me@example.com",
    });
    expect(checked.error?.issues[0]?.message).toBe(
      '"http://mcp.example.com:99999/mcp?email=me@example.com" names port 99999, outside 1–65535 — write the port the MCP server listens on (a number from 1 to 65535)',
    );
  });

  it("a password holding a space and a / (written out, or from ${MCP_PW}) is not read as the port, nor shown", () => {
    const advice =
      'its user:password@ holds "/", which ends the host part of a URL (so the url reads as another host) — write it percent-encoded (/ as %2F, ? as %3F, # as %23, a space as %20, and a % as %25), or leave user:password@ out and send the credentials in an Authorization header under headers';
    // svc mcp add pp -- 'http://user:s3cr et/x@127.0.0.1:8080/mcp' said: names port "s3cr et", which is not digits.
    const written = mcpServerSchema.safeParse({ url: "http://user:s3cr et/x@127.0.0.1:8080/mcp" });
    expect(written.error?.issues[0]?.message).toBe(advice);
    let message = "";
    try {
      renderEntry(
        "pp",
        parse({ url: "http://user:${MCP_PW}@127.0.0.1:8080/mcp" }),
        withPassword("s3cr et/x"),
      );
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(`mcp_servers.pp.url: ${advice}`);
    // A space alone is sent encoded; with a bad port besides, the url is quoted with its password left out.
    const port = mcpServerSchema.safeParse({ url: "http://user:pa ss@127.0.0.1:99999/mcp" });
    expect(port.error?.issues[0]?.message).toBe(
      '"http://user:[redacted]@127.0.0.1:99999/mcp" names port 99999, outside 1–65535 — write the port the MCP server listens on (a number from 1 to 65535)',
    );
  });

  it("written out in config.yaml, the same url is refused at load without quoting the password", () => {
    const checked = mcpServerSchema.safeParse({ url: "https://me:s3cr/t-value@mcp.example.com/mcp" });
    expect(checked.success).toBe(false);
    const message = checked.error?.issues[0]?.message ?? "";
    expect(message).toMatch(/^its user:password@ holds "\/", which ends the host part of a URL/);
    expect(message).not.toContain("s3cr");
  });
});

describe("an http:// url whose port or host is wrong says which, not that the scheme is", () => {
  const loaded = (url: string) => mcpServerSchema.safeParse({ url }).error?.issues[0]?.message;
  const portFix = "write the port the MCP server listens on (a number from 1 to 65535)";
  const hostFix = "write the server's host name or address";

  it("written in config.yaml: the port outside 1–65535 or not digits, the host's character, the IPv4 address", () => {
    expect(loaded("http://127.0.0.1:65536/mcp")).toBe(
      `"http://127.0.0.1:65536/mcp" names port 65536, outside 1–65535 — ${portFix}`,
    );
    expect(loaded("https://h:-1/mcp")).toBe(
      `"https://h:-1/mcp" names port "-1", which is not digits — ${portFix}`,
    );
    expect(loaded("http://h:8o80/mcp")).toBe(
      `"http://h:8o80/mcp" names port "8o80", which is not digits — ${portFix}`,
    );
    expect(loaded("http://my host/mcp")).toBe(
      `"http://my host/mcp" names host "my host", which holds a space — ${hostFix}: a host name cannot hold one`,
    );
    expect(loaded("http://256.1.1.1/mcp")).toBe(
      `"http://256.1.1.1/mcp" names host "256.1.1.1", which is not a valid IPv4 address — ${hostFix} (a host ending in a number is read as an IPv4 address: four numbers, each from 0 to 255)`,
    );
    // What none of these explains keeps the general words.
    expect(loaded("http://[::1:8080/mcp")).toBe(
      'expected an http:// or https:// URL, got "http://[::1:8080/mcp"',
    );
  });

  it("from a ${VAR}: the variable that gave the port or host is named, its value not shown", () => {
    const from = { secrets: { P: "99999", H: "256.1.1.1", U: "http://my host:8080/mcp" }, env: {} };
    const refused = (url: string) => {
      try {
        renderEntry("pp", parse({ url }), from);
      } catch (error) {
        return (error as Error).message;
      }
      return undefined;
    };
    expect(refused("http://127.0.0.1:${P}/mcp")).toBe(
      `mcp_servers.pp.url: "http://127.0.0.1:\${P}/mcp" names a port outside 1–65535 (its port comes from \${P}) — check P in the profile's .env or the environment: a port is a number from 1 to 65535, the one the MCP server listens on`,
    );
    expect(refused("http://${H}:${P}/mcp")).toMatch(
      /names a port outside 1–65535 \(its port comes from \$\{P\}\)/,
    );
    expect(refused("http://${H}/mcp")).toBe(
      `mcp_servers.pp.url: "http://\${H}/mcp" names a host that is not a valid IPv4 address (its host comes from \${H}) — check H in the profile's .env or the environment (a host ending in a number is read as an IPv4 address: four numbers, each from 0 to 255)`,
    );
    const whole = refused("${U}") ?? "";
    expect(whole).toMatch(
      /^mcp_servers\.pp\.url: "\$\{U\}" names a host that holds a space \(its host comes from \$\{U\}\) — check U /,
    );
    expect(whole).not.toContain("my host");
  });
});
