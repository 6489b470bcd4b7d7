import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { startupProblems } from "../../../src/gateway/startupProblems.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

function load(yaml: string, dotenv: string, env: Record<string, string> = {}) {
  const h = tempHome();
  home = h;
  const file = h.write("config.yaml", yaml);
  h.write(".env", dotenv);
  const loaded = loadConfig({ home: h.dir, env });
  return { file, loaded, problems: startupProblems(loaded.config, loaded.paths.config) };
}

const routeSecret = (secret: string) =>
  `platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    routes:\n      gh:\n        secret: '${secret}'\n`;

describe("${VAR:-fallback} in config.yaml, as a shell and docker compose read it", () => {
  it("is the variable when set, the fallback when unset or empty", () => {
    const secretOf = (dotenv: string, env: Record<string, string> = {}) =>
      load(routeSecret("${GH_SECRET:-from-fallback}"), dotenv, env).loaded.config.platforms.webhook.routes.gh
        ?.secret;
    expect(secretOf("GH_SECRET=from-dotenv\n")).toBe("from-dotenv");
    expect(secretOf("", { GH_SECRET: "from-env" })).toBe("from-env");
    expect(secretOf("")).toBe("from-fallback");
    expect(secretOf("GH_SECRET=\n")).toBe("from-fallback");
    expect(secretOf("export GH_SECRET = 'quoted value'\n")).toBe("quoted value");
  });

  it("a fallback that is itself a variable is rendered, as in a shell or docker compose", () => {
    const loaded = (dotenv: string) => load(routeSecret(`$\{GH_SECRET:-$\{HOOK_SECRET}}`), dotenv);
    expect(loaded("HOOK_SECRET=from-hook\n").loaded.config.platforms.webhook.routes.gh?.secret).toBe(
      "from-hook",
    );
    expect(
      loaded("GH_SECRET=own\nHOOK_SECRET=from-hook\n").loaded.config.platforms.webhook.routes.gh?.secret,
    ).toBe("own");
    // Neither set: the variable the fallback names is the one to set (it was `${HOOK_SECRET}` kept as the key text).
    const { file, problems } = loaded("");
    expect(problems).toEqual([
      `${file}: platforms.webhook.routes.gh.secret: \${HOOK_SECRET} is not set — set HOOK_SECRET in ${home?.dir}/.env or the environment`,
    ]);
  });

  it("a ${NAME} left in the value a .env line gives is named with that line's variable, not as if config.yaml wrote it", () => {
    const { file, problems } = load(routeSecret("${GH_SECRET}"), "GH_SECRET=${VAULT_PREFIX}-tail\n");
    const env = `${home?.dir}/.env`;
    expect(problems).toEqual([
      `${file}: platforms.webhook.routes.gh.secret: \${VAULT_PREFIX} is not set — set VAULT_PREFIX in ${env} or the environment (it is left in the value ${env} gives GH_SECRET: set VAULT_PREFIX on a line above GH_SECRET there, or in the environment)`,
    ]);
  });

  it("a name written with spaces inside the braces is told back without them", () => {
    for (const form of ["${ GH_SECRET }", "${GH_SECRET }"]) {
      const { file, problems } = load(routeSecret(form), "");
      expect(problems).toEqual([
        `${file}: platforms.webhook.routes.gh.secret: ${form} is not a variable form svc reads — write \${GH_SECRET}, without spaces inside the braces`,
      ]);
    }
  });

  it("a shell form svc does not read is refused as a secret instead of becoming the literal HMAC key", () => {
    for (const form of ["${GH_SECRET-x}", "${GH_SECRET:?set it}"]) {
      const { file, problems } = load(routeSecret(form), "");
      expect(problems).toEqual([
        `${file}: platforms.webhook.routes.gh.secret: ${form} is not a variable form svc reads — write \${NAME} or \${NAME:-fallback}`,
      ]);
    }
  });

  it("a ${ never closed is refused as a secret, naming only the variable, instead of becoming the literal HMAC key", () => {
    for (const [form, name] of [
      ["${GH_SECRET", "GH_SECRET"],
      ["${GH_SECRET:-unclosed-fallback-text", "GH_SECRET"],
      ["prefix-text-${env:GH_SECRET", "env:GH_SECRET"],
    ] as const) {
      const { file, problems } = load(routeSecret(form), "GH_SECRET=dotenv-secret-value\n");
      expect(problems, form).toEqual([
        `${file}: platforms.webhook.routes.gh.secret: \${${name} has no closing }, so its text would be used as written — end it with } (\${${name}}, or \${${name}:-fallback})`,
      ]);
    }
    const { file, problems } = load(routeSecret("signing-${"), "");
    expect(problems).toEqual([
      `${file}: platforms.webhook.routes.gh.secret: a \${ that no } closes is not a variable svc reads, so its text would be used as written — write \${NAME}, or \${NAME:-fallback} (a secret that holds \${ itself: set it in .env in 'single quotes', SECRET_NAME='...', and write \${SECRET_NAME} here)`,
    ]);
  });
});

describe("a secret that itself holds ${", () => {
  it("is refused without quoting any of its characters, and says how to write it: in .env, single-quoted", () => {
    for (const secret of ["Xy7${Tk9qLm2", "Xy7${Tk9q-Lm2}"]) {
      const { file, problems } = load(routeSecret(secret), "");
      expect(problems, secret).toHaveLength(1);
      expect(problems[0], secret).toMatch(
        new RegExp(
          `^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: platforms\\.webhook\\.routes\\.gh\\.secret: a \\$\\{`,
        ),
      );
      expect(problems[0], secret).toContain("set it in .env in 'single quotes'");
      for (const part of ["Tk9", "tk9", "Lm2", "Xy7"]) expect(problems[0], secret).not.toContain(part);
    }
    const written = load(routeSecret("${GH_SECRET}"), "GH_SECRET='Xy7${Tk9qLm2'\n");
    expect(written.problems).toEqual([]);
    expect(written.loaded.config.platforms.webhook.routes.gh?.secret).toBe("Xy7${Tk9qLm2");
  });
});

describe("an empty secret is refused with what to do", () => {
  it("a ${VAR} left blank in .env is named with where to set it; a secret written empty says to write one or leave it out", () => {
    const h = tempHome();
    home = h;
    const file = h.write("config.yaml", routeSecret("${GH_SECRET}"));
    h.write(".env", "GH_SECRET=\n");
    expect(() => loadConfig({ home: h.dir, env: {} })).toThrow(
      `${file}: platforms.webhook.routes.gh.secret: must not be empty, but \${GH_SECRET} gives an empty value — set it in ${h.dir}/.env or the environment`,
    );
    h.write("config.yaml", routeSecret(""));
    expect(() => loadConfig({ home: h.dir, env: {} })).toThrow(
      `${file}: platforms.webhook.routes.gh.secret: must not be empty — write a value, or leave the key out`,
    );
  });
});

/**
 * A `${GH}` in WEBHOOK_SECRET's own value was refused as `config.yaml: platforms.webhook.secret: ${GH} is not set
 * — set GH in .env`, a key the file does not have, with advice that could not help: GH set in .env changed
 * nothing, since a variable's value (from the environment) is never rendered.
 */
describe("a ${NAME} left in WEBHOOK_SECRET's value is named where the value came from", () => {
  const noSecret =
    "platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    routes:\n      r: {}\n";

  it("from the environment: its value is never rendered, so the secret itself is asked for", () => {
    const { problems } = load(noSecret, "GH=abc\n", { WEBHOOK_SECRET: "${GH}" });
    expect(problems).toEqual([
      "environment variable WEBHOOK_SECRET: ${GH} is not replaced in the value of an environment variable (the tool that started svc passed it as written, as systemd's Environment= does), so its text would be the HMAC key — give WEBHOOK_SECRET the secret itself",
    ]);
  });

  it("from .env: set on a line above it, or the value quoted to be taken as written", () => {
    const { loaded, problems } = load(noSecret, "WEBHOOK_SECRET=ab${GH}\nGH=abc\n");
    expect(problems).toEqual([
      `${loaded.paths.env}: WEBHOOK_SECRET: \${GH} is not set — set GH on a line above it in ${loaded.paths.env}, or in the environment (or put the value in 'single quotes' to take it as written)`,
    ]);
  });
});

/**
 * A `.env` value in 'single quotes' is taken as written, and a value substituted into config.yaml is not
 * rendered again: `S='abc${LIT}'` with `secret: ${S}` is the secret `abc${LIT}`. It was refused as
 * `routes.r.secret: ${LIT} is not set — set LIT`, a name config.yaml never wrote.
 */
describe("a ${NAME} in a .env value taken as written is text of the secret config.yaml substitutes it into", () => {
  const withSecret = (route: string, global = "") =>
    `platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n${global}    routes:\n      r: {${route}}\n`;

  it("a route's secret and the global secret are the value as written, and not refused", () => {
    const route = load(withSecret("secret: '${S}'"), "S='abc${LIT}'\n");
    expect(route.loaded.config.platforms.webhook.routes.r?.secret).toBe("abc${LIT}");
    expect(route.problems).toEqual([]);
    const global = load(withSecret("", "    secret: x-${S:-none}\n"), "S=`abc${LIT}`\n");
    expect(global.loaded.config.platforms.webhook.secret).toBe("x-abc${LIT}");
    expect(global.problems).toEqual([]);
  });

  it("a ${NAME} config.yaml itself writes beside it, or a value .env renders, is still refused when unset", () => {
    const own = load(withSecret("secret: '${S}${GH}'"), "S='abc${LIT}'\n");
    expect(own.problems).toEqual([
      `${own.file}: platforms.webhook.routes.r.secret: \${GH} is not set — set GH in ${home?.dir}/.env or the environment`,
    ]);
    const rendered = load(withSecret("secret: '${S}'"), "S=abc${LIT}\n");
    expect(rendered.problems).toEqual([
      `${rendered.file}: platforms.webhook.routes.r.secret: \${LIT} is not set — set LIT in ${home?.dir}/.env or the environment (it is left in the value ${home?.dir}/.env gives S: set LIT on a line above S there, or in the environment)`,
    ]);
  });
});
