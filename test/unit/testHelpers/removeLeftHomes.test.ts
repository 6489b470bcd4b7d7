import { existsSync } from "node:fs";
import { expect, it } from "vitest";
import { removeLeftHomes, tempHome } from "../../helpers/home.js";

it("a temporary home a test file left behind is removed at the file's end; a cleaned one stays cleaned", () => {
  const left = tempHome();
  left.write("config.yaml", "platforms: {}\n");
  const cleaned = tempHome();
  cleaned.cleanup();
  removeLeftHomes();
  expect(existsSync(left.dir)).toBe(false);
  expect(existsSync(cleaned.dir)).toBe(false);
});
