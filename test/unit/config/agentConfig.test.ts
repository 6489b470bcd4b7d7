import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

function load(agent: string, env: Record<string, string> = {}) {
  home = tempHome();
  home.write("config.yaml", `agent:\n${agent}`);
  return loadConfig({ home: home.dir, env });
}

function problem(agent: string, env: Record<string, string> = {}): string {
  try {
    load(agent, env);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("the config loaded");
}

describe("agent: model providers (docs/agent.md)", () => {
  it("defaults max_steps 10, max_tokens 4096, retries 2 and reads model, base_url and api_key", () => {
    const { config } = load(
      "  provider: openai\n  model: llama3.1\n  base_url: http://127.0.0.1:11434/v1\n  api_key: " +
        "$" +
        "{KEY}\n",
      { KEY: "sk-test" },
    );
    expect(config.agent).toMatchObject({
      provider: "openai",
      model: "llama3.1",
      base_url: "http://127.0.0.1:11434/v1",
      api_key: "sk-test",
      max_steps: 10,
      max_tokens: 4096,
      retries: 2,
    });
  });

  it("accepts anthropic with a model and no api_key (a local endpoint)", () => {
    const { config } = load("  provider: anthropic\n  model: claude-sonnet-4-5\n");
    expect(config.agent.provider).toBe("anthropic");
    expect(config.agent.api_key).toBeUndefined();
  });

  it("names the file, the key, the problem and the fix for an unknown provider", () => {
    expect(problem("  provider: gpt\n")).toMatch(
      /config\.yaml: agent\.provider: unknown provider "gpt" — use one of echo, command, openai, anthropic/,
    );
  });

  it("names the provider meant when the one written is a letter or two from it, as a misspelt key is named", () => {
    expect(problem("  provider: opanai\n")).toMatch(
      /config\.yaml: agent\.provider: unknown provider "opanai" — did you mean "openai"\? use one of echo, command, openai, anthropic/,
    );
    expect(problem("  provider: Anthropic\n")).toContain('did you mean "anthropic"?');
  });

  it("for a service's name as other tools take it (ollama, claude), names the provider and base_url to write", () => {
    expect(problem("  provider: ollama\n  model: llama3.1\n")).toMatch(
      /config\.yaml: agent\.provider: unknown provider "ollama" — write provider: openai and base_url: http:\/\/127\.0\.0\.1:11434\/v1 \(ollama serves the OpenAI-compatible Chat Completions API there\); use one of echo, command, openai, anthropic/,
    );
    expect(problem("  provider: LM-Studio\n")).toContain(
      "write provider: openai and base_url: http://127.0.0.1:1234/v1 (LM-Studio serves",
    );
    expect(problem("  provider: claude\n")).toContain(
      `unknown provider "claude" — write provider: anthropic (Claude's models are served by Anthropic's Messages API); use one of`,
    );
  });

  it("for the API's name as the AI SDK and other clients write it (openai-compatible), names provider openai and base_url", () => {
    for (const written of ["openai-compatible", "OpenAI_Compatible", "openai-chat"])
      expect(problem(`  provider: ${written}\n  model: m\n`)).toContain(
        `unknown provider "${written}" — write provider: openai (it speaks any OpenAI-compatible Chat Completions endpoint: set base_url to that endpoint's base, such as http://127.0.0.1:8000/v1); use one of`,
      );
  });

  it("names the value meant for a key that takes one of a few words (backend: reddis)", () => {
    home = tempHome();
    home.write(
      "config.yaml",
      "gateway:\n  approvals: alow\nstate:\n  backend: reddis\nplatforms:\n  webhook:\n    http_server: Node\n",
    );
    let message = "";
    try {
      loadConfig({ home: home.dir, env: {} });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(
      'gateway.approvals: expected one of "deny", "allow", got "alow" — did you mean "allow"?',
    );
    expect(message).toContain(
      'state.backend: expected one of "local", "redis", got "reddis" — did you mean "redis"?',
    );
    expect(message).toContain(
      'platforms.webhook.http_server: expected one of "uws", "node", got "Node" — did you mean "node"?',
    );
  });

  it("refuses openai and anthropic without a model", () => {
    expect(problem("  provider: openai\n")).toMatch(
      /config\.yaml: agent\.model: missing — provider "openai" needs a model/,
    );
    expect(problem("  provider: anthropic\n")).toMatch(
      /config\.yaml: agent\.model: missing — provider "anthropic" needs a model/,
    );
  });

  it("refuses a base_url that is not http(s), and credentials inside it", () => {
    expect(problem("  provider: openai\n  model: m\n  base_url: ftp://example.com/v1\n")).toMatch(
      /config\.yaml: agent\.base_url: ftp is not supported — the model endpoint must be http:\/\/ or https:\/\//,
    );
    // A host and port without a scheme (how Ollama's address is often written) parses as scheme "localhost".
    expect(problem("  provider: openai\n  model: m\n  base_url: localhost:11434/v1\n")).toMatch(
      /config\.yaml: agent\.base_url: no scheme — write http:\/\/localhost:11434\/v1 \(or https:\/\/\)/,
    );
    expect(problem("  provider: openai\n  model: m\n  base_url: 127.0.0.1:8000\n")).toMatch(
      /agent\.base_url: no scheme — write http:\/\/127\.0\.0\.1:8000 /,
    );
    expect(problem('  provider: openai\n  model: m\n  base_url: "[::1]:11434/v1"\n')).toMatch(
      /agent\.base_url: no scheme — write http:\/\/\[::1\]:11434\/v1 \(or https:\/\/\)/,
    );
    // The hint is the base to write: without a query or fragment, which may carry a key and is refused anyway.
    const noSchemeWithKey = problem(
      '  provider: openai\n  model: m\n  base_url: "localhost:11434/v1?api_key=sk-noscheme-77"\n',
    );
    expect(noSchemeWithKey).toMatch(
      /agent\.base_url: no scheme — write http:\/\/localhost:11434\/v1 \(or https:\/\/\)/,
    );
    expect(noSchemeWithKey).not.toContain("sk-noscheme-77");
    // An empty port (a port variable left blank) would be read as port 80: every run would call it.
    expect(problem("  provider: openai\n  model: m\n  base_url: http://127.0.0.1:/v1\n")).toMatch(
      /agent\.base_url: the port after "127\.0\.0\.1:" is empty .* — write the port the model server listens on/,
    );
    expect(
      problem("  provider: anthropic\n  model: m\n  base_url: http://[::1]:$" + "{PORT}\n", { PORT: "" }),
    ).toMatch(/agent\.base_url: the port after "\[::1\]:" is empty/);
    expect(
      load("  provider: openai\n  model: m\n  base_url: http://[::1]:8000/v1\n").config.agent.base_url,
    ).toBe("http://[::1]:8000/v1");
    expect(problem("  provider: openai\n  model: m\n  base_url: not a url\n")).toMatch(
      /agent\.base_url: not a URL/,
    );
    const withSecret = problem("  provider: openai\n  model: m\n  base_url: https://u:sk-inline@x.test/v1\n");
    expect(withSecret).toMatch(/agent\.base_url: credentials in the URL are not allowed/);
    expect(withSecret).not.toContain("sk-inline");
    // A query or fragment would sit before the appended /chat/completions: refused, never quoted (a key?).
    for (const base_url of [
      "https://res.openai.azure.com/openai/deployments/gpt-4o?api-version=2024-10-21",
      "https://gw.example/v1?key=sk-query",
      "http://127.0.0.1:11434/v1#x",
    ]) {
      const said = problem(`  provider: openai\n  model: m\n  base_url: "${base_url}"\n`);
      expect(said).toMatch(
        /agent\.base_url: a query or fragment \(from "\?" or "#" on\) cannot be part of it/,
      );
      expect(said).not.toContain("sk-query");
    }
  });

  it("bounds max_concurrent_runs (its run slots are made at start: a million never got to listen)", () => {
    expect(load("  max_concurrent_runs: 1000\n").config.agent.max_concurrent_runs).toBe(1000);
    expect(problem("  max_concurrent_runs: 1000000\n")).toMatch(
      /config\.yaml: agent\.max_concurrent_runs: expected at most 1000, got 1000000/,
    );
  });

  it("names an unset variable in model or base_url (its literal text would be sent as the model, or read as the URL)", () => {
    // The .env config.yaml reads is named (a profile's own .env serves only its MCP connections).
    expect(problem("  provider: openai\n  model: $" + "{MODEL}\n")).toBe(
      `${home.dir}/config.yaml: agent.model: $` +
        `{MODEL} is not set — set MODEL in ${home.dir}/.env or the environment`,
    );
    expect(problem("  provider: anthropic\n  model: m\n  base_url: $" + "{LLM_URL}/v1\n")).toBe(
      `${home.dir}/config.yaml: agent.base_url: $` +
        `{LLM_URL} is not set — set LLM_URL in ${home.dir}/.env or the environment`,
    );
    // Set, they are used.
    expect(
      load("  provider: openai\n  model: $" + "{MODEL}\n  base_url: $" + "{LLM_URL}/v1\n", {
        MODEL: "llama3.1",
        LLM_URL: "http://127.0.0.1:11434",
      }).config.agent,
    ).toMatchObject({ model: "llama3.1", base_url: "http://127.0.0.1:11434/v1" });
  });

  it("refuses a ${...} form svc does not read in api_key, model or base_url (its text would be sent as the key or the model)", () => {
    expect(problem("  provider: openai\n  model: m\n  api_key: $" + "{OPENAI_API_KEY:?set it}\n")).toMatch(
      /agent\.api_key: \$\{OPENAI_API_KEY:\?set it\} is not a variable form svc reads — write \$\{NAME\} or \$\{NAME:-fallback\}/,
    );
    expect(problem("  provider: openai\n  model: m\n  api_key: $" + "{input:key}\n")).toMatch(
      /agent\.api_key: \$\{input:key\} is not a variable form svc reads/,
    );
    expect(problem("  provider: anthropic\n  model: $" + "{MODEL-x}\n")).toMatch(
      /agent\.model: \$\{MODEL-x\} is not a variable form svc reads/,
    );
    expect(problem("  provider: openai\n  model: m\n  api_key: $" + "{OPENAI_API_KEY\n")).toMatch(
      /agent\.api_key: \$\{OPENAI_API_KEY has no closing \}, so its text would be used as written/,
    );
    // Under the echo provider these keys are unused, as an unset variable there is.
    expect(load("  provider: echo\n  api_key: $" + "{input:key}\n").config.agent.provider).toBe("echo");
  });

  it("refuses $NAME written without braces (a shell's form, which svc does not replace), never quoting it", () => {
    const refusal = problem("  provider: openai\n  model: m\n  api_key: $OPENAI_API_KEY\n", {
      OPENAI_API_KEY: "sk-real",
    });
    expect(refusal).toMatch(
      /agent\.api_key: a \$ followed by a name is how a shell writes a variable, but svc replaces only \$\{NAME\} \(with braces\), so this text itself would be used — write it as \$\{NAME\}, in quotes/,
    );
    expect(refusal).not.toContain("OPENAI_API_KEY");
    expect(problem("  provider: anthropic\n  model: $MODEL\n")).toMatch(
      /agent\.model: a \$ followed by a name/,
    );
    // A $ inside a longer value is text.
    expect(load("  provider: openai\n  model: m\n  api_key: sk-$abc\n").config.agent.api_key).toBe("sk-$abc");
  });

  it("refuses an api_key no HTTP header can carry (a line break, a character outside Latin-1), never quoting it", () => {
    const cases: Array<[string, RegExp]> = [
      ["sk-copiedkey\nsecondline", /a line break or NUL character/],
      ["sk-copiedkey\u2026tail", /a character outside Latin-1/],
      ["sk-copiedkey\u200btail", /a character outside Latin-1/],
      ["sk-copiedkey\u001btail", /a control character/],
    ];
    for (const [key, what] of cases) {
      for (const provider of ["openai", "anthropic"]) {
        const refusal = problem(`  provider: ${provider}\n  model: m\n  api_key: \${LLM_KEY}\n`, {
          LLM_KEY: key,
        });
        expect(refusal).toMatch(/agent\.api_key: contains /);
        expect(refusal).toMatch(what);
        expect(refusal).toMatch(/which an HTTP header cannot carry/);
        expect(refusal).not.toContain("sk-copiedkey");
      }
    }
    // A tab and Latin-1 letters travel in a header; the echo provider sends no key.
    expect(load('  provider: openai\n  model: m\n  api_key: "sk-a\\tb\u00e9"\n').config.agent.api_key).toBe(
      "sk-a\tb\u00e9",
    );
    expect(load('  provider: echo\n  api_key: "sk-\u2026"\n').config.agent.provider).toBe("echo");
  });

  it("refuses a blank model (spaces, or a variable set to spaces): every run would ask for a model with no name", () => {
    expect(problem('  provider: openai\n  model: "   "\n')).toMatch(
      /config\.yaml: agent\.model: blank — write the model's name/,
    );
    expect(
      problem("  provider: anthropic\n  model: $" + "{MODEL_NAME_VAR}\n", { MODEL_NAME_VAR: "  " }),
    ).toMatch(/agent\.model: blank — write the model's name/);
    expect(load('  provider: command\n  command: [cat]\n  model: "  "\n').config.agent.provider).toBe(
      "command",
    );
  });

  it("takes model and base_url without the spaces or tabs around them: the endpoint would answer 404 for a name or path with a space nobody sees", () => {
    const { config } = load("  provider: openai\n  model: $" + "{MODEL}\n  base_url: $" + "{BASE}\n", {
      MODEL: "gpt-4.1-mini ",
      BASE: " http://127.0.0.1:8000/v1\t",
    });
    expect(config.agent.model).toBe("gpt-4.1-mini");
    expect(config.agent.base_url).toBe("http://127.0.0.1:8000/v1");
    expect(problem('  provider: openai\n  model: m\n  base_url: "  "\n')).toMatch(
      /agent\.base_url: blank \(spaces only\) — write the endpoint's base/,
    );
  });

  it("an empty model (or a variable set empty) is one problem, said once: not also as a blank one", () => {
    const written = problem('  provider: openai\n  model: ""\n');
    expect(written).toMatch(/agent\.model: must not be empty/);
    expect(written).not.toMatch(/blank/);
    const fromVariable = problem("  provider: anthropic\n  model: $" + "{MODEL_NAME_VAR}\n", {
      MODEL_NAME_VAR: "",
    });
    expect(fromVariable).toMatch(
      /agent\.model: must not be empty, but \$\{MODEL_NAME_VAR\} gives an empty value/,
    );
    expect(fromVariable).not.toMatch(/blank/);
  });

  it("an empty base_url (or a variable set empty) is one problem, said once: not also as 'not a URL'", () => {
    const written = problem('  provider: openai\n  model: m\n  base_url: ""\n');
    expect(written).toMatch(/agent\.base_url: must not be empty/);
    expect(written).not.toMatch(/not a URL/);
    const fromVariable = problem("  provider: openai\n  model: m\n  base_url: $" + "{BASE_URL_VAR}\n", {
      BASE_URL_VAR: "",
    });
    expect(fromVariable).toMatch(
      /agent\.base_url: must not be empty, but \$\{BASE_URL_VAR\} gives an empty value/,
    );
    expect(fromVariable).not.toMatch(/not a URL/);
  });

  it("names an unset variable in api_key without printing any key", () => {
    const message = problem("  provider: openai\n  model: m\n  api_key: $" + "{OPENAI_API_KEY}\n");
    expect(message).toBe(
      `${home.dir}/config.yaml: agent.api_key: $` +
        `{OPENAI_API_KEY} is not set — set OPENAI_API_KEY in ${home.dir}/.env or the environment, or remove api_key for a local endpoint`,
    );
  });

  it("names the .env line whose value holds the unset variable, never the value", () => {
    home = tempHome();
    home.write("config.yaml", "agent:\n  provider: openai\n  model: m\n  api_key: $" + "{OPENAI_API_KEY}\n");
    home.write(".env", "OPENAI_API_KEY=$" + "{VAULT_PREFIX}-sk-Zq81x\n", 0o600);
    let message = "";
    try {
      loadConfig({ home: home.dir, env: {} });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe(
      `${home.dir}/config.yaml: agent.api_key: $` +
        `{VAULT_PREFIX} is not set — set VAULT_PREFIX in ${home.dir}/.env or the environment, or remove api_key for a local endpoint (it is left in the value ${home.dir}/.env gives OPENAI_API_KEY: set VAULT_PREFIX on a line above OPENAI_API_KEY there, or in the environment)`,
    );
    expect(message).not.toContain("Zq81x");
  });

  it("names a profile's .env that sets an unset api_key variable: config.yaml does not read it", () => {
    home = tempHome();
    home.write("config.yaml", "agent:\n  provider: openai\n  model: m\n  api_key: $" + "{OPENAI_API_KEY}\n");
    home.write("profiles/work/.env", "OPENAI_API_KEY=sk-work-0123456789\n", 0o600);
    expect(() => loadConfig({ home: home.dir, env: {} })).toThrow(
      `agent.api_key: $` +
        `{OPENAI_API_KEY} is not set — set OPENAI_API_KEY in ${home.dir}/.env or the environment, or remove api_key for a local endpoint (${home.dir}/profiles/work/.env sets it, but config.yaml reads its $` +
        `{...} values from ${home.dir}/.env only: a profile's .env serves only that profile's MCP connections)`,
    );
  });

  it("refuses an empty api_key, naming the variable that gave it (no key would be sent at all)", () => {
    home = tempHome();
    const file = home.write(
      "config.yaml",
      "agent:\n  provider: openai\n  model: m\n  api_key: $" + "{KEY}\n",
    );
    home.write(".env", "KEY=\n");
    let fromEnv = "";
    try {
      loadConfig({ home: home.dir, env: {} });
    } catch (err) {
      fromEnv = (err as Error).message;
    }
    expect(fromEnv).toContain(
      `${file}: agent.api_key: must not be empty, but \${KEY} gives an empty value — set it in ${home.dir}/.env or the environment`,
    );
    const written = problem('  provider: anthropic\n  model: m\n  api_key: ""\n');
    expect(written).toMatch(/agent\.api_key: must not be empty — write a value, or leave the key out/);
    // Named once, as empty: not also as a key of spaces alone.
    for (const message of [fromEnv, written]) expect(message).not.toContain("blank");
  });

  it("takes an api_key without the spaces or tabs around it, as HTTP sends it, so an echo of the key is hidden", () => {
    // A key pasted with a space after it: `KEY="sk-... "` in .env, or quoted in config.yaml.
    const { config } = load("  provider: openai\n  model: m\n  api_key: $" + "{KEY}\n", {
      KEY: " sk-proj-Zq81xKEY55abcdef \t",
    });
    expect(config.agent.api_key).toBe("sk-proj-Zq81xKEY55abcdef");
    const message = problem('  provider: anthropic\n  model: m\n  api_key: " \t "\n');
    expect(message).toMatch(
      /agent\.api_key: blank \(spaces only\) — write the key, or remove api_key for a local endpoint/,
    );
  });

  it("never prints the api_key value in a config error", () => {
    const message = problem("  provider: openai\n  api_key: sk-secret-value\n  max_steps: 0\n");
    expect(message).toMatch(/agent\.max_steps/);
    expect(message).not.toContain("sk-secret-value");
  });
});

describe("agent.command written as one string", () => {
  it("says to write one argument per entry, split as a shell would, since no shell runs it", () => {
    expect(problem("  provider: command\n  command: /usr/bin/agent --quiet\n")).toBe(
      `${home.dir}/config.yaml: agent.command: expected a list, got "/usr/bin/agent --quiet" — each argument is one entry of a list (svc starts no shell to split a line): write command: [/usr/bin/agent, --quiet]`,
    );
    expect(problem("  provider: command\n  command: []\n")).toBe(
      `${home.dir}/config.yaml: agent.command: expected at least 1 entry, got [] — write the program and its arguments, one entry each: command: [my-agent, --quiet]`,
    );
  });

  it('takes an empty argument (--prefix ""), as an MCP server\'s args do; an empty program is refused', () => {
    expect(load('  provider: command\n  command: [my-agent, --prefix, ""]\n').config.agent.command).toEqual([
      "my-agent",
      "--prefix",
      "",
    ]);
    expect(problem('  provider: command\n  command: ["", --quiet]\n')).toBe(
      `${home.dir}/config.yaml: agent.command[0]: names no program — write the program to run first, then its arguments`,
    );
  });
});
