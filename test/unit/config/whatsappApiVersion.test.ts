import { afterEach, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * The Graph API reads a version only with its `v` (`/v21.0/<phone number id>/messages`); a path starting
 * `/21.0/` names the object `21.0`, and every message is refused with "Object with ID '21.0' does not exist".
 */
let home: TempHome | undefined;
afterEach(() => home?.cleanup());

const whatsapp = (apiVersion: string) =>
  `platforms:\n  whatsapp:\n    enabled: true\n    token: t\n    phone_number_id: "1098"\n    api_version: ${apiVersion}\n`;

function load(yaml: string): { version?: string; error?: string } {
  const h = tempHome();
  home = h;
  const file = h.write("config.yaml", yaml);
  try {
    const { config } = loadConfig({ home: h.dir, env: {} });
    const platforms = config.platforms as unknown as Record<string, { api_version?: string }>;
    return { version: platforms.whatsapp?.api_version as string };
  } catch (err) {
    return { error: (err as Error).message.replaceAll(file, "FILE") };
  }
}

it("a version written without its v, quoted or as a number, is refused naming the key and what to write", () => {
  expect(load(whatsapp('"21.0"')).error).toBe(
    "FILE: platforms.whatsapp.api_version: no Graph API version — write it with its v: api_version: v21.0",
  );
  // YAML reads 21.0 as the number 21: the advice still names the version as Meta writes it.
  expect(load(whatsapp("21.0")).error).toBe(
    "FILE: platforms.whatsapp.api_version: no Graph API version — write it with its v: api_version: v21.0",
  );
  expect(load(whatsapp("[v21.0]")).error).toBe(
    'FILE: platforms.whatsapp.api_version: expected text (a Graph API version, such as v21.0), got ["v21.0"]',
  );
});

it("a version with its v is used as written, and none is v21.0", () => {
  expect(load(whatsapp("v22.0"))).toEqual({ version: "v22.0" });
  expect(load(whatsapp('"v19.0"'))).toEqual({ version: "v19.0" });
  expect(
    load(`platforms:\n  whatsapp:\n    enabled: true\n    token: t\n    phone_number_id: "1098"\n`),
  ).toEqual({ version: "v21.0" });
});
