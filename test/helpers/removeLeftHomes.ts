// Setup file (vitest.config.ts): after each test file, the temporary homes it made and left behind.
import { afterAll } from "vitest";
import { removeLeftHomes } from "./home.js";

afterAll(removeLeftHomes);
