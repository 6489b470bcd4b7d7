import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

function withDotenv(dotenv: string) {
  const h = tempHome();
  home = h;
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

  it("still reads what shells and dotenv read: export, comments, blank lines, CRLF, BOM, multi-line quoted values", () => {
    const { load } = withDotenv(
      "\uFEFF# c\r\n\r\nexport WEBHOOK_PORT=9000\r\nexport OTHER\r\nKEY=\"line1\r\nline two: with colon\r\n\"\r\nWEBHOOK_SECRET='a b' # note\r\n",
    );
    expect(load().config.platforms.webhook).toMatchObject({ port: 9000, secret: "a b" });
  });
});
