import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * tools.web_search.url with user:password@ (a SearXNG instance behind basic auth) passed the load; fetch
 * refuses such a URL with an error quoting it whole, so every search failed as "could not be reached"
 * and the password went into the tool error the model reads, the run journal and the log.
 */
let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

function load(url: string): unknown {
  home = tempHome();
  home.write("config.yaml", `tools:\n  web_search: {backend: searxng, url: '${url}'}\n`);
  try {
    return loadConfig({ home: home.dir, env: {} });
  } catch (err) {
    return err;
  }
}

describe("tools.web_search.url", () => {
  it("with user:password@ is refused at load, naming the key, never the password", () => {
    const error = load("https://bob:searx-pw-1@searx.example.com/");
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toContain(
      "config.yaml: tools.web_search.url: holds a user name or password (user:password@) — remove it: svc cannot send credentials written in a URL; put the backend's key in api_key",
    );
    expect(message).not.toContain("searx-pw-1");
  });

  it("without one it loads", () => {
    expect(load("http://127.0.0.1:8080")).not.toBeInstanceOf(Error);
  });

  it("written empty is one problem, said once: not also as 'not an http(s) URL'", () => {
    const message = (load("") as Error).message;
    expect(message).toContain("tools.web_search.url: must not be empty");
    expect(message).not.toContain("not an http(s) URL");
  });
});
