import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isSvcError } from "../../../src/errors.js";
import {
  decodeBase64Loose,
  describeInstall,
  installNameProblem,
  MAX_INSTALL_PAYLOAD,
  parseInstallLink,
} from "../../../src/io/installLink.js";

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64");
const link = (name: string, config: string) =>
  `svc://mcp/install?name=${encodeURIComponent(name)}&config=${encodeURIComponent(config)}`;
const rejected = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return isSvcError(err, "install_link");
  }
  return false;
};

// `__proto__` matches the pattern but is refused (a configuration cannot hold it): see mcpInstallNames.test.ts.
const validName = fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/).filter((name) => name !== "__proto__");
const urlConfig = fc.record({
  url: fc.constantFrom("http", "https").chain((s) => fc.domain().map((d) => `${s}://${d}/mcp`)),
  timeout: fc.option(fc.integer({ min: 1, max: 600 }), { nil: undefined }),
});
const commandConfig = fc.record({
  // A command of spaces alone is refused (its own test); any other is a command to warn about.
  command: fc.string({ minLength: 1, maxLength: 40 }).filter((command) => command.trim() !== ""),
  args: fc.array(fc.string(), { maxLength: 4 }),
});

describe("install link parser (spec 4.1)", () => {
  it("round-trips any valid name and url config in base64url and standard base64", () => {
    fc.assert(
      fc.property(validName, urlConfig, fc.boolean(), (name, config, standard) => {
        const clean = JSON.parse(JSON.stringify(config)) as Record<string, unknown>;
        const parsed = parseInstallLink(link(name, standard ? b64(clean) : b64url(clean)));
        expect(parsed).toEqual({ name, config: clean, kind: "url" });
      }),
    );
  });

  it("accepts standard base64 pasted into the link unescaped (a '+' arrives as a space)", () => {
    // {"url":"https://a.test/mcp?>>>"} encodes with '+' and '/' in standard base64.
    const config = { url: "https://a.test/mcp?>>>", headers: { "X-Key": "~~~???" } };
    const raw = b64(config);
    expect(raw).toMatch(/\+/);
    expect(parseInstallLink(`svc://mcp/install?name=srv&config=${raw}`).config).toEqual(config);
  });

  it("accepts command servers and marks them for the extra warning", () => {
    fc.assert(
      fc.property(validName, commandConfig, (name, config) => {
        const parsed = parseInstallLink(link(name, b64url(config)));
        expect(parsed.kind).toBe("command");
        expect(describeInstall(parsed)).toContain("WARNING");
      }),
    );
  });

  it("rejects every name outside ^[A-Za-z0-9._-]{1,64}$", () => {
    const bad = fc.oneof(
      fc.string({ minLength: 1, maxLength: 70 }).filter((s) => !/^[A-Za-z0-9._-]{1,64}$/.test(s)),
      fc.stringMatching(/^[a-z]{65,80}$/),
      fc.constant(""),
    );
    fc.assert(
      fc.property(bad, (name) =>
        rejected(() => parseInstallLink(link(name, b64url({ url: "https://x.test/mcp" })))),
      ),
    );
  });

  it("a name it refuses (also by svc mcp add) is explained in words, with the length when it is too long", () => {
    // As a route name is: the first character outside the rule named, and the name to write instead.
    expect(installNameProblem("bad name")).toBe(
      'name "bad name" is not a valid server name: use letters, digits, ".", "_" and "-" (1-64 characters) — " " is not one of them: write bad-name',
    );
    expect(installNameProblem("My/Server")).toMatch(/ — "\/" is not one of them: write My-Server$/);
    expect(installNameProblem("")).toBe(
      'name "" is not a valid server name: use letters, digits, ".", "_" and "-" (1-64 characters)',
    );
    expect(installNameProblem("a".repeat(65))).toBe(
      `name "${"a".repeat(65)}" is 65 characters long — a server name has at most 64: shorten it`,
    );
    expect(installNameProblem(`${"a".repeat(64)} b`)).toMatch(/ — " " is not one of them: write a{64}$/);
    expect(installNameProblem("files.v2_x-y")).toBeUndefined();
  });

  it("rejects configs with both url and command, neither, or non-string values", () => {
    const shapes = fc.oneof(
      fc.record({ url: fc.constant("https://a.test/"), command: fc.constant("x") }),
      fc.record({ headers: fc.dictionary(fc.string(), fc.string()) }),
      fc.record({ url: fc.integer() }),
      fc.record({ command: fc.array(fc.string()) }),
      fc.record({ url: fc.constantFrom("ftp://a.test/", "file:///etc/passwd", "javascript:alert(1)") }),
    );
    fc.assert(
      fc.property(validName, shapes, (name, config) =>
        rejected(() => parseInstallLink(link(name, b64url(config)))),
      ),
    );
  });

  it("a command written as a list or as Zed's {path, args} gets the fix config.yaml gives, not only 'must be a string'", () => {
    expect(() => parseInstallLink(link("q", b64url({ command: ["npx", "-y", "pkg"] })))).toThrow(
      'install link rejected: config: mcp_servers.q.command: expected a string, got ["npx","-y","pkg"] — command is the program alone: write command: npx and args: [-y, pkg]',
    );
    expect(() => parseInstallLink(link("q", b64url({ command: { path: "npx", args: ["-y"] } })))).toThrow(
      /^install link rejected: config: mcp_servers\.q\.command: expected a string, got .* — command is the program alone, beside the entry's other keys: write command: npx and args: \[-y\]/,
    );
    // A list holding a credential is not quoted back.
    expect(() =>
      parseInstallLink(link("q", b64url({ command: ["npx", "ctx", "--api-key", "sk-secret-1234"] }))),
    ).toThrow(
      /not shown: it may hold a credential\) — command is the program alone: write command: npx and args: \[the rest of the list\]$/,
    );
  });

  it("a tool name given as a JSON number or boolean (its text not known: 1.50 is 1.5) is refused, saying to quote it", () => {
    const tools = (value: unknown) => () =>
      parseInstallLink(link("q", b64url({ command: "npx", tools: { include: value } })));
    expect(tools(7)).toThrow(
      "install link rejected: config: mcp_servers.q.tools.include: expected a tool name, a glob, or a list of them, got 7 — put it in quotes if it is meant as text",
    );
    expect(tools(["a", 1.5, true])).toThrow(
      'config: mcp_servers.q.tools.include: expected a tool name, a glob, or a list of them, got ["a",1.5,true] — put 1.5 and true in quotes if they are meant as text',
    );
    expect(tools(["7", "1.50"])().config.tools).toEqual({ include: ["7", "1.50"] });
  });

  // biome-ignore-start lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
  it("checks url as config.yaml does: its words for a url it refuses, and a ${VAR} url (port, host) left to the connect, its scheme shown", () => {
    const url = (u: string) => () => parseInstallLink(link("web", b64url({ url: u })));
    expect(url("localhost:8080/mcp")).toThrow(
      'install link rejected: config: mcp_servers.web.url: expected an http:// or https:// URL, got "localhost:8080/mcp" (no http:// or https:// at its start) — write http://localhost:8080/mcp (https:// for TLS)',
    );
    expect(url("FTP://files.example/mcp")).toThrow(
      'config: mcp_servers.web.url: expected an http:// or https:// URL, got "FTP://files.example/mcp" (ftp is not supported)',
    );
    for (const u of ["http://127.0.0.1:${MCP_PORT}/mcp", "https://${MCP_HOST}/mcp", "HTTPS://a.example/mcp"])
      expect(parseInstallLink(link("web", b64url({ url: u }))).config.url).toBe(u);
    expect(url("${MCP_URL}")).toThrow(
      "config: mcp_servers.web.url: expected an http:// or https:// URL, and a variable may not stand for its scheme — write http:// or https:// before it",
    );
  });
  // biome-ignore-end lint/suspicious/noTemplateCurlyInString: the config's own variable syntax

  it("rejects JSON that is not an object and text that is not base64", () => {
    for (const v of [[], "x", 1, null, true])
      expect(rejected(() => parseInstallLink(link("ok", b64url(v))))).toBe(true);
    expect(rejected(() => parseInstallLink(link("ok", "%%%not base64")))).toBe(true);
    expect(rejected(() => parseInstallLink(link("ok", Buffer.from("{not json").toString("base64url"))))).toBe(
      true,
    );
  });

  it("rejects payloads over 32 KB and accepts one just under", () => {
    const filler = (n: number) => ({ url: "https://a.test/mcp", headers: { "X-Note": "x".repeat(n) } });
    const base = JSON.stringify(filler(0)).length;
    expect(parseInstallLink(link("big", b64url(filler(MAX_INSTALL_PAYLOAD - base)))).kind).toBe("url");
    expect(
      rejected(() => parseInstallLink(link("big", b64url(filler(MAX_INSTALL_PAYLOAD - base + 1))))),
    ).toBe(true);
  });

  it("accepts a 32 KB payload in standard base64 percent-encoded into the link, however many +, / and = it holds", () => {
    // "???" is "Pz8/" in base64: a quarter of the characters become %2F in the link.
    const filler = (n: number) => ({ url: "https://a.test/mcp", headers: { "X-Note": "?".repeat(n) } });
    const base = JSON.stringify(filler(0)).length;
    const full = link("big-one", b64(filler(MAX_INSTALL_PAYLOAD - base)));
    expect(full.length).toBeGreaterThan(2 * MAX_INSTALL_PAYLOAD);
    expect(parseInstallLink(full).kind).toBe("url");
    expect(
      rejected(() => parseInstallLink(link("big-one", b64(filler(MAX_INSTALL_PAYLOAD - base + 1))))),
    ).toBe(true);
  });

  it("rejects other schemes, hosts and paths, and repeated parameters", () => {
    const cfg = b64url({ url: "https://a.test/" });
    for (const l of [
      `https://mcp/install?name=a&config=${cfg}`,
      `svc://other/install?name=a&config=${cfg}`,
      `svc://mcp/remove?name=a&config=${cfg}`,
      `svc://mcp/install?name=a&name=b&config=${cfg}`,
      `svc://user@mcp/install?name=a&config=${cfg}`,
      `svc://user:secret@mcp/install?name=a&config=${cfg}`,
      `svc://:secret@mcp/install?name=a&config=${cfg}`,
      "svc://mcp/install?name=a",
    ]) {
      expect(
        rejected(() => parseInstallLink(l)),
        l,
      ).toBe(true);
    }
  });

  it("a link cut at its & (pasted into a shell without quotes) is refused with why and the quoting to use", () => {
    const quoting =
      "a shell cuts a link given without quotes at its & (and runs the rest as a command of its own), so put the link in single quotes: svc mcp install 'svc://mcp/install?name=...&config=...'";
    expect(() => parseInstallLink("svc://mcp/install?name=docs")).toThrow(
      `install link rejected: exactly one name and one config parameter are required — only name is there: ${quoting}`,
    );
    expect(() => parseInstallLink(`svc://mcp/install?config=${b64url({ url: "https://a.test/" })}`)).toThrow(
      `— only config is there: ${quoting}`,
    );
    // Both there, or one given twice: no such hint.
    for (const l of ["svc://mcp/install?name=a&name=b", "svc://mcp/install?name=a&config=x&config=y"])
      expect(() => parseInstallLink(l)).toThrow(/parameter are required$/);
  });

  it("reads the scheme and the host in any case, as RFC 3986 does (svc://MCP/install), but not the path", () => {
    const cfg = b64url({ url: "https://a.test/" });
    for (const l of [`SVC://mcp/install?name=a&config=${cfg}`, `svc://MCP/install?name=a&config=${cfg}`])
      expect(parseInstallLink(l).name, l).toBe("a");
    expect(rejected(() => parseInstallLink(`svc://mcp/Install?name=a&config=${cfg}`))).toBe(true);
  });

  it("decodes base64 with or without padding but not a mix of both alphabets", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const buf = Buffer.from(bytes);
        expect(decodeBase64Loose(buf.toString("base64"))?.equals(buf)).toBe(true);
        expect(decodeBase64Loose(buf.toString("base64url"))?.equals(buf)).toBe(true);
      }),
    );
    expect(decodeBase64Loose("ab+_")).toBeUndefined();
  });

  it("rejects a __proto__ key inside the entry (env, headers, tools), which config.yaml refuses: written, it would stop every later command", () => {
    const message = (json: string) => {
      try {
        parseInstallLink(link("gh", Buffer.from(json).toString("base64url")));
      } catch (err) {
        return (err as Error).message;
      }
      return "accepted";
    };
    // JSON.parse makes "__proto__" an own key, as a JavaScript object literal would not.
    expect(message('{"command":"npx","env":{"__proto__":{"NODE_OPTIONS":"--inspect"}}}')).toBe(
      'install link rejected: config: mcp_servers.gh.env.__proto__: "__proto__" cannot be used as a name (JavaScript reserves it) — rename it',
    );
    expect(message('{"url":"https://x.test/mcp","headers":{"X-A":"1","__proto__":"2"}}')).toMatch(
      /mcp_servers\.gh\.headers\.__proto__: "__proto__" cannot be used as a name/,
    );
    expect(message('{"command":"npx","tools":{"include":["a"],"__proto__":true}}')).toMatch(
      /mcp_servers\.gh\.tools\.__proto__: "__proto__" cannot be used as a name/,
    );
    expect(message('{"command":"npx","env":{"PROTO":"__proto__"}}')).toBe("accepted");
  });

  it("names a key the entry may not have as config.yaml would, under mcp_servers.<name>, pointing to docs/mcp.md", () => {
    const message = (config: unknown) => {
      try {
        parseInstallLink(link("gh", b64url(config)));
      } catch (err) {
        return (err as Error).message;
      }
      return "accepted";
    };
    expect(message({ url: "https://x.test/mcp", disabled: true })).toBe(
      'install link rejected: config: mcp_servers.gh: unknown key "disabled" — disabled: write enabled: false for disabled: true (or remove it) (see docs/mcp.md)',
    );
    expect(message({ url: "https://x.test/mcp", timout: 5 })).toMatch(
      /^install link rejected: config: mcp_servers\.gh: unknown key "timout" — did you mean "timeout"\?/,
    );
    expect(message({ command: "npx", protocol: "modern" })).toBe(
      'install link rejected: config: mcp_servers.gh.protocol: expected one of "auto", "stateless", "legacy", got "modern"',
    );
    expect(message({ url: "https://x.test/mcp", timeout: "soon" })).toMatch(
      /^install link rejected: config: mcp_servers\.gh\.timeout: expected seconds, got "soon"/,
    );
  });
});
