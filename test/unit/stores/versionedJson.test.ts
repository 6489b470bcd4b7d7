import { readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type CronJob, cronStore } from "../../../src/io/stores/cronStore.js";
import { subscriptionStore } from "../../../src/io/stores/subscriptions.js";
import { createVersionedStore, MAX_WRITTEN_DEPTH } from "../../../src/io/stores/versionedJson.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

/**
 * webhook_subscriptions.json holds every subscription's secret. V8's JSON.parse error for an unexpected
 * token quotes the text around it (`..."secret": TOPSECRET}" is not valid JSON`), so a hand-edited file
 * with an unquoted secret would put part of it on stderr and into the gateway log.
 */
describe("a store file that is not valid JSON", () => {
  it("is reported without the excerpt around an unexpected token", () => {
    home = tempHome();
    const path = home.write("webhook_subscriptions.json", '{"a": {"secret": TOPSECRET-4242, "events": []}}');
    const store = createVersionedStore(path, { conflictMessage: "changed" });
    expect(() => store.read()).toThrow(
      `${path}: not valid JSON at line 1, column 18 (an unexpected character (the text around it is not shown: the file holds secrets)) — fix or remove the file`,
    );
    try {
      store.read();
    } catch (err) {
      expect((err as Error).message).not.toContain("TOPSECRET");
    }
  });

  it("keeps a reason that quotes nothing (a position, the end of the input)", () => {
    home = tempHome();
    const path = join(home.dir, "cron.json");
    home.write("cron.json", '{"a": {"secret": "s3cr3t"');
    expect(() => createVersionedStore(path, { conflictMessage: "changed" }).read()).toThrow(
      /cron\.json: not valid JSON at line 1, column 26 \((Unexpected end of JSON input|Expected .* at position \d+.*)\)/,
    );
  });

  it("names the line and column of a mistake made by hand (a trailing comma, an unquoted value)", () => {
    home = tempHome();
    const path = home.write(
      "webhook_subscriptions.json",
      '{\n  "a": {\n    "secret": "s",\n  },\n  "b": {"prompt": "x"}\n}\n',
    );
    const store = createVersionedStore(path, { conflictMessage: "changed" });
    expect(() => store.read()).toThrow(`${path}: not valid JSON at line 4, column 3 (`);
    home.write("webhook_subscriptions.json", '{\n  "a": {\n    "secret": TOPSECRET\n  }\n}\n');
    expect(() => store.read()).toThrow(
      `${path}: not valid JSON at line 3, column 15 (an unexpected character`,
    );
  });
});

describe("a store file of zero bytes only (a power cut after the file grew, its data never on the disk)", () => {
  it("is named so, with what to do, not as a mistake at line 1, column 1 to fix", () => {
    home = tempHome();
    const path = home.write("cron/jobs.json", "\0".repeat(512));
    expect(() => createVersionedStore(path, { field: "jobs", conflictMessage: "changed" }).read()).toThrow(
      `${path}: holds only zero bytes (512 bytes): its data never reached the disk (a power cut or a crash as it was written) — restore it from a backup, or remove it`,
    );
  });
});

describe("a store file with a name written twice (a record copied by hand, its name left as it was)", () => {
  it("is refused naming the name and its lines, not read with the first copy silently dropped (and gone at the next write)", async () => {
    home = tempHome();
    const flat = home.write(
      "webhook_subscriptions.json",
      '{\n  "deploys": {"prompt": "prod"},\n  "other": {},\n  "deploys": {"prompt": "staging"}\n}\n',
    );
    const subscriptions = createVersionedStore(flat, { conflictMessage: "changed" });
    const problem = `${flat}: "deploys" is written twice (lines 2 and 4): JSON keeps only the last, and the next write would drop the first — rename or remove one`;
    expect(() => subscriptions.read()).toThrow(problem);
    await expect(subscriptions.update(() => undefined)).rejects.toThrow(problem);
    const jobs = home.write(
      "cron/jobs.json",
      '{"revision": 3, "jobs": {\n"a1b2c3d4": {"name": "one"},\n"a1b2c3d4": {"name": "two"}}}',
    );
    expect(() => createVersionedStore(jobs, { field: "jobs", conflictMessage: "changed" }).read()).toThrow(
      `${jobs}: jobs."a1b2c3d4" is written twice (lines 2 and 3): JSON keeps only the last, and the next write would drop the first — rename or remove one`,
    );
  });

  it("reads a name that only looks repeated (escaped alike, or a field of two records)", () => {
    home = tempHome();
    const path = home.write(
      "webhook_subscriptions.json",
      '{"a": {"prompt": "x", "note": "\\"a\\": {"}, "b": {"prompt": "x"}, "\\u0061b": {}}',
    );
    expect(Object.keys(createVersionedStore(path, { conflictMessage: "changed" }).read().records)).toEqual([
      "a",
      "b",
      "ab",
    ]);
  });
});

describe("a store file of another shape", () => {
  it("names what is wrong and what to do (a list of jobs, a top-level list)", () => {
    home = tempHome();
    const path = home.write("jobs.json", '{"revision": 1, "jobs": []}');
    const store = createVersionedStore(path, {
      field: "jobs",
      keyedBy: "job id",
      conflictMessage: "changed",
    });
    expect(() => store.read()).toThrow(
      `${path}: "jobs" must be an object keyed by job id, got a list — fix or remove the file`,
    );
    home.write("jobs.json", "[]");
    expect(() => store.read()).toThrow(
      `${path}: expected a JSON object with "jobs" ({"revision": 1, "jobs": {}} holds none) — fix or remove the file`,
    );
  });
});

describe("a store file whose records' key is missing", () => {
  it("holds none when it holds nothing else; one with its records under another key is refused, naming it", () => {
    home = tempHome();
    const store = createVersionedStore<unknown>(home.write("jobs.json", '{"revision": 3}'), {
      field: "jobs",
      conflictMessage: "changed",
    });
    expect(store.read().records).toEqual({});
    const path = home.write("jobs.json", '{"revision": 1, "Jobs": {"a1": {"name": "n"}}}');
    // Read as empty, the gateway would run none of them, and the next write would leave them behind.
    expect(() => store.read()).toThrow(
      `${path}: no "jobs" key, where its records go (found "Jobs") — did you mean "jobs" for "Jobs"? — rename the key, or fix or remove the file`,
    );
    home.write("jobs.json", '{"revision": 1, "jobs": null}');
    expect(() => store.read()).toThrow(
      `${path}: "jobs" must be an object keyed by name, got null — fix or remove the file`,
    );
  });
});

describe("a file where the store's directory goes", () => {
  it("is named with what to do, on reading and on writing (not ENOTDIR or mkdir's EEXIST)", async () => {
    home = tempHome();
    const dir = home.write("cron", "not a directory\n");
    const path = join(dir, "jobs.json");
    const store = createVersionedStore(path, { field: "jobs", conflictMessage: "changed" });
    const fix = `${dir} is a file, not a directory: move that file away (svc makes the directory)`;
    expect(() => store.read()).toThrow(
      `${path}: cannot be read (ENOTDIR: not a directory, open '${path}') — ${fix}`,
    );
    await expect(store.update(() => undefined)).rejects.toThrow(`${path}: cannot be written — ${fix}`);
  });

  // Seen: "<h>/cron is a file, not a directory: move that file away" of cron -> /dev/null: a device is no file to move.
  it("a link to a device in its place is named as one, with the link to change", async () => {
    home = tempHome();
    const dir = join(home.dir, "cron");
    symlinkSync("/dev/null", dir);
    const path = join(dir, "jobs.json");
    const store = createVersionedStore(path, { field: "jobs", conflictMessage: "changed" });
    const fix = `${dir} is a symbolic link to /dev/null, which is a device, not a directory: point the link at a directory, or remove the link (svc makes the directory)`;
    expect(() => store.read()).toThrow(
      `${path}: cannot be read (ENOTDIR: not a directory, open '${path}') — ${fix}`,
    );
    await expect(store.update(() => undefined)).rejects.toThrow(`${path}: cannot be written — ${fix}`);
  });
});

describe("a store file a newer version of svc wrote", () => {
  it("keeps the top-level keys this version does not know, and each record's unknown fields, when it writes", async () => {
    home = tempHome();
    const path = home.write(
      "cron/jobs.json",
      `${JSON.stringify({ format: 2, revision: 4, jobs: { a1: { id: "a1", next_run: "x", timezone: "Europe/Paris" } }, defaults: { deliver: "log" } }, null, 2)}\n`,
    );
    const store = createVersionedStore<{ next_run: string }>(path, {
      field: "jobs",
      keyedBy: "job id",
      conflictMessage: "changed",
    });
    await store.update((jobs) => {
      jobs.a1 = { ...(jobs.a1 as { next_run: string }), next_run: "y" };
    });
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({
      format: 2,
      revision: 5,
      jobs: { a1: { id: "a1", next_run: "y", timezone: "Europe/Paris" } },
      defaults: { deliver: "log" },
    });
  });
});

describe("a write keeps the records it does not change as they are in the file", () => {
  it("numbers JavaScript would print otherwise (an id past 2^53, 1.50) stay as written; a number changed is written as it is now", async () => {
    home = tempHome();
    const path = home.write(
      "webhook_subscriptions.json",
      [
        "{",
        '  "old": {',
        '    "ticket": 12345678901234567890,',
        '    "weight": 1.50,',
        '    "limits": [1.0, 2, 3e2],',
        '    "deliver_extra": {',
        '      "chat_id": 123456789012345678',
        "    }",
        "  },",
        '  "other": {',
        '    "weight": 2.50',
        "  }",
        "}",
        "",
      ].join("\n"),
    );
    const store = createVersionedStore<Record<string, unknown>>(path, {
      conflictMessage: "changed",
      extraNumbersAsText: true,
    });
    await store.update((records) => {
      records.newone = { weight: 1 };
      (records.other as Record<string, unknown>).weight = 3;
    });
    expect(readFileSync(path, "utf8")).toBe(
      [
        "{",
        '  "old": {',
        '    "ticket": 12345678901234567890,',
        '    "weight": 1.50,',
        '    "limits": [',
        "      1.0,",
        "      2,",
        "      3e2",
        "    ],",
        '    "deliver_extra": {',
        // Read as the id written, as before (config.yaml reads it so too).
        '      "chat_id": "123456789012345678"',
        "    }",
        "  },",
        '  "other": {',
        '    "weight": 3',
        "  },",
        '  "newone": {',
        '    "weight": 1',
        "  }",
        "}",
        "",
      ].join("\n"),
    );
  });

  it("a filter's 64-bit id or header value stays as written where the change leaves it, though the change reads it as a filter compares it", async () => {
    home = tempHome();
    const filters = (equals: string) =>
      `"filters": [{"field": "payload.id", "equals": ${equals}}, {"field": "headers.x-version", "equals": 1.0}]`;
    const path = home.write(
      "webhook_subscriptions.json",
      `{"left": {${filters("12345678901234567890")}}, "touched": {"enabled": true, ${filters("12345678901234567891")}}, "refiltered": {${filters("12345678901234567892")}}}\n`,
    );
    const store = createVersionedStore<Record<string, unknown>>(path, {
      conflictMessage: "changed",
      extraNumbersAsText: true,
    });
    const { result } = await store.update((records) => {
      const touched = records.touched as Record<string, unknown>;
      records.touched = { ...touched, enabled: false };
      const refiltered = records.refiltered as { filters: { equals: unknown }[] };
      refiltered.filters = [{ ...(refiltered.filters[0] as object), equals: "9" }];
      records.added = { filters: [{ field: "payload.id", equals: "12345678901234567893" }] };
      return records.touched;
    });
    // What the change returned is the record as it read it (a filter's values as compared).
    expect(result).toEqual({
      enabled: false,
      filters: [
        { field: "payload.id", equals: "12345678901234567891" },
        { field: "headers.x-version", equals: "1.0" },
      ],
    });
    const written = readFileSync(path, "utf8").replace(/\s+/g, "");
    expect(written).toBe(
      `{"left":{${filters("12345678901234567890")}},"touched":{"enabled":false,${filters("12345678901234567891")}},"refiltered":{"filters":[{"field":"payload.id","equals":"9"}]},"added":{"filters":[{"field":"payload.id","equals":"12345678901234567893"}]}}`.replace(
        /\s+/g,
        "",
      ),
    );
    // Read again, they compare as before.
    expect(store.read().records.left).toEqual({
      filters: [
        { field: "payload.id", equals: "12345678901234567890" },
        { field: "headers.x-version", equals: "1.0" },
      ],
    });
  });

  it("with its records under a key (cron/jobs.json), a record replaced by a copy with a field changed, and records named by digits where they are in the file", async () => {
    home = tempHome();
    const path = home.write(
      "cron/jobs.json",
      '{"revision": 4, "jobs": {"b": {"extra": 1.0}, "7": {"next_run": "x", "extra": 99999999999999999999}, "gone": {}}}\n',
    );
    const store = createVersionedStore<Record<string, unknown>>(path, {
      field: "jobs",
      conflictMessage: "changed",
      extraNumbersAsText: true,
    });
    await store.update((jobs) => {
      // As the gateway writes a job's next run: a copy of the job with it.
      jobs["7"] = { ...(jobs["7"] as Record<string, unknown>), next_run: "y" };
      delete jobs.gone;
      jobs["3"] = { extra: 2 };
    });
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({
      revision: 5,
      jobs: { b: { extra: 1 }, "7": { next_run: "y", extra: 1e20 }, "3": { extra: 2 } },
    });
    expect(readFileSync(path, "utf8")).toBe(
      [
        "{",
        '  "revision": 5,',
        '  "jobs": {',
        '    "b": {',
        '      "extra": 1.0',
        "    },",
        '    "7": {',
        '      "next_run": "y",',
        '      "extra": 99999999999999999999',
        "    },",
        '    "3": {',
        '      "extra": 2',
        "    }",
        "  }",
        "}",
        "",
      ].join("\n"),
    );
  });
});

describe("a store holding a value nested thousands of levels deep (written by hand or by another tool)", () => {
  /** An array nested `depth` levels deep around one number, as JSON text. */
  const nested = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;

  it("a change of another record writes it back as it is, as a read takes it (not refused as invalid JSON at a made-up line)", async () => {
    home = tempHome();
    const meta = nested(3000);
    const path = home.write("webhook_subscriptions.json", `{\n"deep": {"prompt": "p", "meta": ${meta}}\n}\n`);
    const store = subscriptionStore(path);
    expect(Object.keys(store.read().records)).toEqual(["deep"]);
    await store.update((records) => {
      records.added = { prompt: "q" };
    });
    const { records } = store.read();
    expect(Object.keys(records)).toEqual(["deep", "added"]);
    expect(JSON.stringify((records.deep as { meta: unknown }).meta)).toBe(meta);
  });

  it("one beside a deliver_extra id is read and written back too, the id as written", async () => {
    home = tempHome();
    const meta = nested(600);
    const path = home.write(
      "webhook_subscriptions.json",
      `{"deep": {"deliver_extra": {"chat_id": 123456789012345678}, "meta": ${meta}}}\n`,
    );
    const store = subscriptionStore(path);
    expect((store.read().records.deep as { deliver_extra: unknown }).deliver_extra).toEqual({
      chat_id: "123456789012345678",
    });
    await store.update((records) => {
      records.added = { prompt: "q" };
    });
    const deep = store.read().records.deep as { deliver_extra: unknown; meta: unknown };
    expect(deep.deliver_extra).toEqual({ chat_id: "123456789012345678" });
    expect(JSON.stringify(deep.meta)).toBe(meta);
  });

  // The write-back's own walks (what is kept brought in line with the change, and the writing with the numbers
  // as written) went on the call stack: ~4,000 levels with a plain number, ~2,500 once a number is kept as
  // written anywhere in the file (a 1.50, an id past 2^53, a numeric deliver_extra id).
  for (const [depth, leaf, beside, kept] of [
    [4000, "1", "", "a plain number"],
    [3500, "1.50", "", "its number kept as written"],
    [3500, "1", '"big": 12345678901234567890, ', "a number kept as written beside it"],
    [
      3500,
      "1",
      '"deliver_extra": {"chat_id": 123456789012345678901}, ',
      "a numeric deliver_extra id beside it",
    ],
  ] as const)
    it(`${depth} levels deep with ${kept}: a change of another record writes it back as it is`, async () => {
      home = tempHome();
      const text = `{\n"deep": {${beside}"prompt": "p", "meta": ${"[".repeat(depth)}${leaf}${"]".repeat(depth)}}\n}\n`;
      const path = home.write("webhook_subscriptions.json", text);
      const store = subscriptionStore(path);
      await store.update((records) => {
        records.added = { prompt: "q" };
      });
      expect(Object.keys(store.read().records)).toEqual(["deep", "added"]);
      const written = readFileSync(path, "utf8").replace(/\s+/g, "");
      expect(written).toContain(`"meta":${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`);
      // A deliver_extra id is written back as the id it delivers to (docs/coalescing-and-cron.md).
      const kept = beside.replace(/\s+/g, "").replace(/"chat_id":(\d+)/, '"chat_id":"$1"');
      if (beside !== "") expect(written).toContain(kept);
    });

  it("one record past MAX_WRITTEN_DEPTH levels is refused before anything is written, naming its depth", async () => {
    home = tempHome();
    const text = `{\n"deep": {"prompt": "p", "ticket": 1.50, "meta": ${nested(MAX_WRITTEN_DEPTH)}}\n}\n`;
    const path = home.write("webhook_subscriptions.json", text);
    await expect(
      subscriptionStore(path).update((records) => {
        records.added = { prompt: "q" };
      }),
    ).rejects.toThrow(`the record "deep" nests objects or arrays ${MAX_WRITTEN_DEPTH + 1} levels deep`);
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  it("one nested deeper than svc can write back is named so, with its record and depth, and the file is left as it was", async () => {
    home = tempHome();
    const text = `{\n"shallow": {"prompt": "p"},\n"deep": {"prompt": "p", "meta": ${nested(20_000)}}\n}\n`;
    const path = home.write("webhook_subscriptions.json", text);
    const store = subscriptionStore(path);
    expect(Object.keys(store.read().records)).toEqual(["shallow", "deep"]);
    await expect(
      store.update((records) => {
        records.added = { prompt: "q" };
      }),
    ).rejects.toThrow(
      `${path}: nested too deep: the record "deep" nests objects or arrays 20001 levels deep, more than svc can write back (5,000 levels at most) — flatten or remove that value by hand (the file is unchanged)`,
    );
    expect(readFileSync(path, "utf8")).toBe(text);
  });
});

describe("a top-level field beside a store's records nested thousands of levels deep (written by hand or by a newer version)", () => {
  /** An array nested `depth` levels deep around a number kept as written, as JSON text. */
  const nested = (depth: number) => `${"[".repeat(depth)}1.50${"]".repeat(depth)}`;
  const jobs = `"jobs": {"j1": {"id": "j1", "name": "n", "schedule": "every 1d", "prompt": "p", "deliver": "log", "state": "enabled", "created_at": "2025-11-22T00:00:00.000Z"}}`;
  const pause = (records: Record<string, CronJob>) => {
    records.j1 = { ...(records.j1 as CronJob), state: "paused" };
  };

  it("one past MAX_WRITTEN_DEPTH levels is refused before anything is written, naming the field and its depth", async () => {
    home = tempHome();
    const text = `{
"revision": 1,
${jobs},
"meta": ${nested(MAX_WRITTEN_DEPTH + 1)}
}
`;
    const path = home.write("jobs.json", text);
    await expect(cronStore(path).update(pause)).rejects.toThrow(
      `${path}: nested too deep: the top-level field "meta" nests objects or arrays ${MAX_WRITTEN_DEPTH + 1} levels deep, more than svc can write back (5,000 levels at most) — flatten or remove that value by hand (the file is unchanged)`,
    );
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  it("one nested deeper than a string can be written (25,000 levels) is named so, not as an invalid string length", async () => {
    home = tempHome();
    const text = `{
"revision": 1,
${jobs},
"meta": ${nested(25_000)}
}
`;
    const path = home.write("jobs.json", text);
    const store = cronStore(path);
    expect(Object.keys(store.read().records)).toEqual(["j1"]);
    await expect(store.update(pause)).rejects.toThrow(
      `${path}: nested too deep: the top-level field "meta" nests objects or arrays 25000 levels deep, more than svc can write back (5,000 levels at most) — flatten or remove that value by hand (the file is unchanged)`,
    );
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  it("one within the bound is written back as it is beside the changed record", async () => {
    home = tempHome();
    const path = home.write(
      "jobs.json",
      `{
"revision": 1,
${jobs},
"meta": ${nested(100)}
}
`,
    );
    await cronStore(path).update(pause);
    const written = readFileSync(path, "utf8");
    expect(written.replace(/\s+/g, "")).toContain(`"meta":${nested(100)}`);
    expect(cronStore(path).read().records.j1?.state).toBe("paused");
  });

  it("in the webhook subscription store (keyed by route name at the top level) such a value is a record, named as one", async () => {
    home = tempHome();
    const text = `{
"ok": {"prompt": "p"},
"meta": ${nested(MAX_WRITTEN_DEPTH + 1)}
}
`;
    const path = home.write("webhook_subscriptions.json", text);
    await expect(
      subscriptionStore(path).update((records) => {
        records.added = { prompt: "q" };
      }),
    ).rejects.toThrow(
      `${path}: nested too deep: the record "meta" nests objects or arrays ${MAX_WRITTEN_DEPTH + 1} levels deep, more than svc can write back (5,000 levels at most)`,
    );
    expect(readFileSync(path, "utf8")).toBe(text);
  });
});
