import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

function load(yaml: string, env: Record<string, string> = {}) {
  home = tempHome();
  home.write("config.yaml", yaml);
  return loadConfig({ home: home.dir, env });
}

describe("config: tools section", () => {
  it("has safe defaults and no web_search backend", () => {
    const { config } = load("agent:\n  provider: echo\n");
    expect(config.tools).toEqual({
      web: { allow_private: false, max_bytes: 2097152, max_chars: 20000, timeout_seconds: 20 },
      terminal: { timeout_seconds: 60, max_output_bytes: 65536 },
      file: { max_bytes: 1048576 },
    });
  });

  it("reads a backend with its key from the environment", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a config.yaml interpolation
    const yaml = "tools:\n  web_search:\n    backend: brave\n    api_key: ${BRAVE_API_KEY}\n";
    const { config } = load(yaml, { BRAVE_API_KEY: "k-123" });
    expect(config.tools.web_search).toMatchObject({ backend: "brave", api_key: "k-123", max_results: 5 });
  });

  it("takes the key without the spaces or tabs around it, as HTTP sends it, so an echo of the key is hidden; refuses a blank one", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a config.yaml interpolation
    const yaml = "tools:\n  web_search:\n    backend: brave\n    api_key: ${BRAVE_API_KEY}\n";
    expect(load(yaml, { BRAVE_API_KEY: "\tk-123-brave-key " }).config.tools.web_search?.api_key).toBe(
      "k-123-brave-key",
    );
    expect(() => load(yaml, { BRAVE_API_KEY: "  " })).toThrow(
      /tools\.web_search\.api_key: blank \(spaces only\) — write the backend's key/,
    );
  });

  it.each([
    [
      "tools:\n  web_search:\n    backend: searxng\n",
      /tools\.web_search\.url: missing — backend "searxng" needs url/,
    ],
    [
      "tools:\n  web_search:\n    backend: tavily\n",
      /tools\.web_search\.api_key: missing — backend "tavily" needs api_key: \$\{TAVILY_API_KEY\}/,
    ],
    [
      "tools:\n  web_search:\n    backend: searxng\n    url: ftp://x\n",
      /tools\.web_search\.url: not an http\(s\) URL/,
    ],
    [
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a config.yaml interpolation
      "tools:\n  web_search:\n    backend: searxng\n    url: ${SEARX_URL}\n",
      /tools\.web_search\.url: \$\{SEARX_URL\} is not set — set SEARX_URL \(the SearXNG instance's http\(s\) URL\) in the \.env beside config\.yaml or the environment/,
    ],
    ["tools:\n  web_search:\n    backend: bing\n", /tools\.web_search\.backend/],
    [
      "tools:\n  web:\n    allow_privat: true\n",
      /tools\.web: unknown key "allow_privat" — did you mean "allow_private"\?/,
    ],
  ])("refuses %j", (yaml, message) => {
    expect(() => load(yaml)).toThrow(message);
  });
  it("refuses a brave or tavily api_key no HTTP header can carry, naming the key and never quoting it", () => {
    const cases: Array<[string, RegExp]> = [
      ["brv-copiedkey\nsecondline", /a line break or NUL character/],
      ["brv-copiedkey\u2026tail", /a character outside Latin-1/],
      ["brv-copiedkey\u200btail", /a character outside Latin-1/],
      ["brv-copiedkey\u001btail", /a control character/],
    ];
    for (const [key, what] of cases) {
      for (const backend of ["brave", "tavily"]) {
        const yaml = `tools:\n  web_search:\n    backend: ${backend}\n    api_key: \${SEARCH_KEY_VAR}\n`;
        let refusal = "";
        try {
          load(yaml, { SEARCH_KEY_VAR: key });
        } catch (err) {
          refusal = (err as Error).message;
        }
        expect(refusal).toMatch(/tools\.web_search\.api_key: contains /);
        expect(refusal).toMatch(what);
        expect(refusal).toMatch(/which an HTTP header cannot carry: every search would fail/);
        expect(refusal).not.toContain("brv-copiedkey");
      }
    }
    // Latin-1 letters travel in a header; searxng sends no key (an unused one is only warned about).
    const latin = 'tools:\n  web_search:\n    backend: brave\n    api_key: "brv-\u00e9"\n';
    expect(load(latin).config.tools.web_search?.api_key).toBe("brv-\u00e9");
    const searx =
      'tools:\n  web_search:\n    backend: searxng\n    url: http://127.0.0.1:8080\n    api_key: "x\u2026"\n';
    expect(load(searx).config.tools.web_search?.backend).toBe("searxng");
  });
});
