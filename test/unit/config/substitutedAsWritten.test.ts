import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { unusedSettingWarnings } from "../../../src/config/unusedSettings.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

const d = "$";

/** The warnings `svc config check` and the gateway's start give for `yaml` with `dotenv` beside it. */
function warnings(yaml: string, dotenv: string): string[] {
  home = tempHome();
  home.write("config.yaml", yaml);
  home.write(".env", dotenv);
  const loaded = loadConfig({ home: home.dir, env: {} });
  return unusedSettingWarnings(loaded.config, loaded.paths.config);
}

const email = (password: string) => `platforms:
  email:
    enabled: true
    host: smtp.example.com
    user: me@example.com
    password: ${password}
    from: me@example.com
`;

describe("a value a variable gives is not rendered again, so no warning judges (or quotes) it", () => {
  it("a password from .env holding ${ is sent as it is: no warning, none of its characters in the log", () => {
    expect(warnings(email(`${d}{SMTP_PASS}`), `SMTP_PASS='Xy7${d}{Tk9qLm2'\n`)).toEqual([]);
    expect(warnings(email(`${d}{SMTP_PASS}`), `SMTP_PASS='Xy7${d}{TK9Q}Lm2'\n`)).toEqual([]);
    // Not a shell's $NAME either: `$abc` is the password.
    expect(warnings(email(`${d}{SMTP_PASS}`), `SMTP_PASS='${d}abc'\n`)).toEqual([]);
  });

  it("agent.command entries, a route's events, filters and deliver_extra recipients: only config.yaml's own variables are named", () => {
    const yaml = `agent:
  provider: command
  command: [cat, "${d}{F}", "${d}{L}", "${d}{NOPE}"]
platforms:
  webhook:
    secret: abcdefghijklmnop
    routes:
      a:
        events: ["${d}{F}"]
        filters: [{field: "${d}{L}", equals: "${d}{F}"}]
        deliver: telegram
        deliver_extra: {chat_id: "${d}{L}"}
`;
    const all = warnings(yaml, `A=2\nF='lit${d}{A}zzzzzzzz'\nL='lit${d}{LITX}zzzzzzz'\n`);
    expect(all.filter((w) => w.includes("{A}") || w.includes("LITX"))).toEqual([]);
    expect(all.filter((w) => w.includes("is not set"))).toEqual([
      expect.stringContaining(`agent.command[3]: ${d}{NOPE} is not set`),
    ]);
  });

  it("an unquoted .env value whose own variable nothing set is still named: that line's variable is not set", () => {
    const all = warnings(email(`${d}{SMTP_PASS}`), `SMTP_PASS=${d}{VAULT}-tail\n`);
    expect(all).toEqual([expect.stringContaining(`platforms.email.password: ${d}{VAULT} is not set`)]);
  });
});

describe("a credential written in config.yaml with a ${ that does not close", () => {
  it("is named without the characters after the ${, with how to write such a secret", () => {
    const all = warnings(email(`"Xy7${d}{Tk9qLm2"`), "");
    expect(all).toHaveLength(1);
    expect(all[0]).toContain(
      `platforms.email.password: a ${d}{ has no closing }, so this text itself is sent to email — write ${d}{NAME} or ${d}{NAME:-fallback} (a secret that holds ${d}{ itself: set it in .env in 'single quotes', SECRET_NAME='...', and write ${d}{SECRET_NAME} here)`,
    );
    expect(all[0]).not.toContain("Tk9q");
    // A name as a variable is written is still quoted: it is no secret's text.
    expect(warnings(email(`"${d}{SMTP_PASS"`), "")[0]).toContain(
      `platforms.email.password: ${d}{SMTP_PASS has no closing }`,
    );
  });
});
