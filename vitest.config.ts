import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Each file in a fresh process re-evaluated the whole of src/ (~0.85 s a file, 220 s of a 585 s run
    // here); a worker now keeps its module cache from file to file (585 → 410 s). Tests must not lean on
    // module state left by an earlier file: gateways, fakes and clocks are made and stopped per file.
    isolate: false,
    // Vitest's default on 2 cores is one worker; most files wait on sockets and child processes, so two
    // share the cores well (full suite ~8.5 → ~5.7 min here, no failures; three made timing tests flaky).
    maxWorkers: 2,
    reporters: ["default", "./test/helpers/summaryReporter.ts"],
  },
});
