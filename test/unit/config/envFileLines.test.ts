import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const homes: TempHome[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) home.cleanup();
});

function withDotenv(dotenv: string) {
  const h = tempHome();
  homes.push(h);
  h.write("config.yaml", "platforms:\n  webhook:\n    enabled: true\n");
  const env = h.write(".env", dotenv);
  return { env, load: () => loadConfig({ home: h.dir, env: {} }) };
}

describe(".env lines that set nothing are refused, not skipped (spec 2.1: WEBHOOK_* from .env)", () => {
  it("WEBHOOK_SECRET: value (YAML style) names the line and the fix, without echoing the value", () => {
    const { env, load } = withDotenv("# secrets\nWEBHOOK_PORT=9000\nWEBHOOK_SECRET: hunter2\n");
    expect(load).toThrow(
      `${env}: line 3: not a NAME=value line — write WEBHOOK_SECRET=<value>, or start the line with # to keep it as a comment`,
    );
    expect(load).not.toThrow(/hunter2/);
  });

  it("a line of words without = is refused the same way", () => {
    const { env, load } = withDotenv("WEBHOOK_PORT=9000\nexport WEBHOOK_SECRET hunter2\n");
    expect(load).toThrow(`${env}: line 2: not a NAME=value line — write WEBHOOK_SECRET=<value>`);
  });

  it("a quote no later line closes is refused at the line that opens it, without echoing the value", () => {
    for (const [text, line, quote] of [
      ['S1="abc\nP1=unterminated\n', 1, '"'],
      ["WEBHOOK_PORT=9000\nS1='abc\n", 2, "'"],
    ] as const) {
      const { env, load } = withDotenv(text);
      expect(load).toThrow(
        `${env}: line ${line}: the value of S1 opens a ${quote} quote that no later line closes — close it where the value ends, or drop it (S1=<value>)`,
      );
      expect(load).not.toThrow(/abc/);
    }
  });

  it("a quoted value with more after its closing quote is refused at that line, without echoing the value", () => {
    for (const [text, line, quote] of [
      ['S1="hunterpart"morepart\n', 1, '"'],
      ["WEBHOOK_PORT=9000\nS1='hunterpart' 'morepart'\n", 2, "'"],
      ["S1='it''s hunterpart'\n", 1, "'"],
      ['S1="hunterpart\nmorepart"tail\n', 2, '"'],
    ] as const) {
      const { env, load } = withDotenv(text);
      expect(load, text).toThrow(
        `${env}: line ${line}: the value of S1 goes on after its closing ${quote} quote — put the whole value inside the quotes (S1=${quote}<value>${quote}): read so, the quotes would be part of the value (a shell would join the pieces)`,
      );
      expect(load).not.toThrow(/hunterpart|morepart/);
    }
  });

  it("a closing quote followed by spaces or a comment, or an escaped quote inside, is fine", () => {
    const { load } = withDotenv(
      'WEBHOOK_SECRET="quoted-secret-value"   # the signing secret\nOTHER="a \\"b\\" c"\nTHIRD=\'x\'#c\n',
    );
    expect(load().config.platforms.webhook.secret).toBe("quoted-secret-value");
  });

  it("still reads what shells and dotenv read: export, comments, blank lines, CRLF, BOM, multi-line quoted values, a bare NAME (docker --env-file)", () => {
    const { load } = withDotenv(
      "\uFEFF# c\r\n\r\nexport WEBHOOK_PORT=9000\r\nexport OTHER\r\nPASSED_THROUGH\r\nKEY=\"line1\r\nline two: with colon\r\n\"\r\nWEBHOOK_SECRET='a b' # note\r\n",
    );
    expect(load().config.platforms.webhook).toMatchObject({ port: 9000, secret: "a b" });
  });
});

describe("WEBHOOK_ENABLED / WEBHOOK_PORT value forms (spec 2.1)", () => {
  it("accepts 1/yes/TRUE/on in any case, with spaces kept by quotes, from .env or the environment", () => {
    for (const value of ["1", "yes", "TRUE", "on", "' on '", '" Yes "']) {
      const { load } = withDotenv(`WEBHOOK_ENABLED=${value}\n`);
      expect(load().config.platforms.webhook.enabled, value).toBe(true);
    }
    const { load } = withDotenv("WEBHOOK_ENABLED=' off '\nWEBHOOK_PORT=' 9000 '\n");
    expect(load().config.platforms.webhook).toMatchObject({ enabled: false, port: 9000 });
  });

  it("refuses a value that is not a boolean or a port, naming where it came from", () => {
    const enabled = withDotenv("WEBHOOK_ENABLED=enable\n");
    expect(enabled.load).toThrow(
      `${enabled.env}: WEBHOOK_ENABLED: expected true or false (or yes/no, on/off, 1/0), got "enable"`,
    );
    for (const port of ["abc", "65536", "-1", "80.5", "0x50"]) {
      const bad = withDotenv(`WEBHOOK_PORT=${port}\n`);
      expect(bad.load, port).toThrow(
        `${bad.env}: WEBHOOK_PORT: expected a port number (0-65535), got "${port}" — write a plain number (WEBHOOK_PORT=8644; 0 picks a free port) there, or remove the line to use platforms.webhook.port`,
      );
    }
    expect(enabled.load).toThrow(
      "— write true or false there, or remove the line to use platforms.webhook.enabled",
    );
    // Set in the environment, which wins over .env: fixed there, or unset.
    const home = withDotenv("");
    const dir = home.env.slice(0, -"/.env".length);
    expect(() => loadConfig({ home: dir, env: { WEBHOOK_PORT: "8644/tcp" } })).toThrow(
      'environment variable WEBHOOK_PORT: expected a port number (0-65535), got "8644/tcp" — set it to a plain number (WEBHOOK_PORT=8644; 0 picks a free port), or unset it (unset WEBHOOK_PORT) to use .env or platforms.webhook.port',
    );
  });
});

describe(".env values naming other variables, as a shell, docker compose and python-dotenv read them", () => {
  const routeSecret = (yaml: string) =>
    `platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    routes:\n      gh:\n        secret: '${yaml}'\n`;
  function secretWith(dotenv: string, env: Record<string, string> = {}) {
    const h = tempHome();
    homes.push(h);
    h.write("config.yaml", routeSecret("$" + "{GH_SECRET}"));
    h.write(".env", dotenv);
    return loadConfig({ home: h.dir, env }).config.platforms.webhook.routes.gh?.secret;
  }

  it("a reference to an earlier line or the environment is replaced by its value (it was the HMAC key's literal text)", () => {
    expect(secretWith("SHARED=s3cret\nGH_SECRET=$" + "{SHARED}\n")).toBe("s3cret");
    expect(secretWith('GH_SECRET="pre-$' + '{SHARED}"\n', { SHARED: "env" })).toBe("pre-env");
    expect(secretWith("GH_SECRET=$" + "{MISSING:-fallback}\n")).toBe("fallback");
  });

  it("a reference takes the value its name had at that line, not a value a later line gives it", () => {
    // A shell, docker compose and python-dotenv read the lines in order: GH_SECRET is `first`.
    expect(secretWith("SHARED=first\nGH_SECRET=$" + "{SHARED}\nSHARED=second\n")).toBe("first");
    // A line adding to the value an earlier line gave the same name.
    expect(secretWith("GH_SECRET=s3\nGH_SECRET=$" + "{GH_SECRET}cret\n")).toBe("s3cret");
    expect(secretWith("GH_SECRET=$" + "{GH_SECRET}-suffix\n", { GH_SECRET: "env" })).toBe("env-suffix");
  });

  it("a line inside a quoted value that spans lines sets nothing of its own", () => {
    const h = tempHome();
    homes.push(h);
    h.write("config.yaml", "platforms:\n  webhook:\n    enabled: true\n");
    h.write(".env", 'NOTE="first line\nINNER=a#b\nlast line"\n');
    expect(loadConfig({ home: h.dir, env: {} }).scope.secrets).toEqual({
      NOTE: "first line\nINNER=a#b\nlast line",
    });
  });

  it("a value in single quotes is taken verbatim", () => {
    expect(secretWith("SHARED=s3cret\nGH_SECRET='$" + "{SHARED}'\n")).toBe("$" + "{SHARED}");
  });
});
