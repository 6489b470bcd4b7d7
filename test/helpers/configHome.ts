import { afterEach } from "vitest";
import { type LoadedConfig, loadConfig } from "../../src/config/load.js";
import { type TempHome, tempHome } from "./home.js";

/**
 * A home per test whose config.yaml and `.env` hold what the test writes, loaded as the gateway loads them
 * (no process environment); removed when the test ends. `home` is the latest one.
 */
export function configHomes(): {
  loaded(yaml: string, dotenv: string): LoadedConfig;
  readonly home: TempHome;
} {
  let current: TempHome | undefined;
  afterEach(() => {
    current?.cleanup();
    current = undefined;
  });
  return {
    loaded(yaml, dotenv) {
      const h = tempHome();
      current = h;
      h.write("config.yaml", yaml);
      h.write(".env", dotenv);
      return loadConfig({ home: h.dir, env: {} });
    },
    get home() {
      return current as TempHome;
    },
  };
}
