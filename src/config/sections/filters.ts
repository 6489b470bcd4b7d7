import { z } from "zod";
import { regexHint, regexProblem } from "../../streams/regex.js";
import { quotingIssue } from "../describe.js";
import { nearMiss } from "../nearMiss.js";
import { valueWithoutUrlCredentials } from "../urlCredentials.js";

/** The example of the `in: []` refusal, as config.yaml and as a JSON store record (YAML's breaks JSON). */
export const IN_EXAMPLE = { yaml: "in: [opened, reopened]", json: '"in": ["opened", "reopened"]' } as const;

/** Leaf operators; a leaf filter is `field` plus exactly one of these. */
export const FILTER_OPERATORS = [
  "exists",
  "missing",
  "equals",
  "not_equals",
  "contains",
  "in",
  "in_file",
  "regex",
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

const ONE_VALUE = "expected one value (text, a number, true/false or null)";

/** What to write instead of a list or mapping under `op`: each operator has its own way to several values. */
const SEVERAL: Readonly<Record<"equals" | "not_equals" | "contains", string>> = {
  equals: "to match any of several values use in: [...]",
  not_equals: "to match none of several values use not: {field: ..., in: [...]}",
  contains: "to match any of several use any: [{field: ..., contains: a}, {field: ..., contains: b}]",
};

/**
 * `.nan`, `.inf` or `1e400` (past what a double holds), which YAML (and JSON.parse, for `1e400`) read as a
 * number that is not finite: one value all the same, so the advice for a list or mapping would mislead.
 */
function notFinite(input: unknown): string | undefined {
  return typeof input === "number" && !Number.isFinite(input)
    ? `${ONE_VALUE}, got ${String(input)} — write a finite number, or put it in quotes if it is meant as text`
    : undefined;
}

/** One value for `op`; a list or mapping is refused saying how to write what it meant. */
function scalarFor(op: keyof typeof SEVERAL) {
  return z.union([z.string(), z.number(), z.boolean(), z.null()], {
    error: (issue) =>
      notFinite(issue.input) ??
      (typeof issue.input === "object" && issue.input !== null && !Array.isArray(issue.input)
        ? `${ONE_VALUE}, got a mapping — to compare a key inside the field, add the key to field's dotted path (field: pull_request.user, ${op}: {login: x} → field: pull_request.user.login, ${op}: x)`
        : `${ONE_VALUE} — ${SEVERAL[op]}`),
  });
}
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()], {
  error: (issue) => notFinite(issue.input) ?? ONE_VALUE,
});
export type Scalar = z.infer<typeof scalar>;

export type Filter =
  | { field: string; exists: boolean }
  | { field: string; missing: true }
  | { field: string; equals: Scalar }
  | { field: string; not_equals: Scalar }
  | { field: string; contains: Scalar }
  | { field: string; in: Scalar[] }
  | { field: string; in_file: string }
  | { field: string; regex: string }
  | { all: Filter[] }
  | { any: Filter[] }
  | { not: Filter };

const leafShapes = {
  exists: z.boolean(),
  // A custom issue: the generic invalid_value wording ("expected one of true") would replace the hint.
  missing: z
    .boolean()
    .refine((v) => v, "missing takes true (for a field that must be present, use exists: true)"),
  equals: scalarFor("equals"),
  not_equals: scalarFor("not_equals"),
  contains: scalarFor("contains"),
  // An empty list matches nothing: its route would ignore every event without a word.
  in: z.array(scalar).min(1, `an empty list matches nothing — list the values, e.g. ${IN_EXAMPLE.yaml}`),
  // Leaving either out would leave the filter without an operator: say what to write instead.
  in_file: z
    .string()
    .min(1, "an empty path names no list — write the list file's path (relative to the profile root)"),
  regex: z
    .string()
    .min(1, "an empty pattern matches every value — write a pattern, or use exists: true for any value"),
  // Only the keys are checked: relating each schema to z.ZodType cost the type check ~0.3 s.
} satisfies Record<FilterOperator, unknown>;

const GROUPS = ["all", "any", "not"] as const;

const REGEX = "write regex (an RE2 search of the value's text)";
const NO_NUMERIC =
  "filters have no numeric comparison: match the digits with regex, or decide in the route's script";

/** Filter keys other tools (and query languages) use, and what svc writes instead. */
const OTHER_TOOLS_KEYS: Readonly<Record<string, string>> = {
  matches: REGEX,
  match: REGEX,
  pattern: REGEX,
  regexp: REGEX,
  re: REGEX,
  eq: "write equals",
  is: "write equals",
  value: "write equals",
  ne: "write not_equals",
  neq: "write not_equals",
  not_in: "write not: {field: ..., in: [...]}",
  nin: "write not: {field: ..., in: [...]}",
  one_of: "write in: [...]",
  in_list: "write in: [...]",
  starts_with: "write regex: '^<text>' (an RE2 search: ^ anchors it at the start)",
  startswith: "write regex: '^<text>' (an RE2 search: ^ anchors it at the start)",
  prefix: "write regex: '^<text>' (an RE2 search: ^ anchors it at the start)",
  ends_with: "write regex: '<text>$' (an RE2 search: $ anchors it at the end)",
  endswith: "write regex: '<text>$' (an RE2 search: $ anchors it at the end)",
  suffix: "write regex: '<text>$' (an RE2 search: $ anchors it at the end)",
  includes: "write contains",
  has: "write contains",
  gt: NO_NUMERIC,
  gte: NO_NUMERIC,
  lt: NO_NUMERIC,
  lte: NO_NUMERIC,
  greater_than: NO_NUMERIC,
  less_than: NO_NUMERIC,
  present: "write exists: true",
  absent: "write missing: true",
  and: "write all: [...]",
  or: "write any: [...]",
  none: "write not: {any: [...]} (none of them matches)",
  path: "write field (a dotted path such as pull_request.user.login)",
  key: "write field (a dotted path such as pull_request.user.login)",
};

export const filterSchema: z.ZodType<Filter> = z.lazy(() =>
  z
    .record(z.string(), z.unknown())
    .superRefine((raw, ctx) => {
      const keys = Object.keys(raw);
      const groups = keys.filter((k) => (GROUPS as readonly string[]).includes(k));
      const ops = keys.filter((k) => (FILTER_OPERATORS as readonly string[]).includes(k));
      const unknown = keys.filter((k) => k !== "field" && !groups.includes(k) && !ops.includes(k));
      if (unknown.length > 0) {
        const key = unknown[0] as string;
        const other = Object.hasOwn(OTHER_TOOLS_KEYS, key.toLowerCase())
          ? OTHER_TOOLS_KEYS[key.toLowerCase()]
          : undefined;
        const meant =
          other === undefined ? nearMiss(key, ["field", ...FILTER_OPERATORS, ...GROUPS]) : undefined;
        const hint = other ?? (meant === undefined ? undefined : `did you mean "${meant}"?`);
        ctx.addIssue({
          code: "custom",
          message: `unknown filter key "${key}"${hint === undefined ? "" : ` — ${hint}`} (a filter is field plus one of ${FILTER_OPERATORS.join(", ")}, or all/any/not)`,
        });
        return;
      }
      if (groups.length + ops.length === 0) {
        ctx.addIssue({
          code: "custom",
          message: `a filter needs an operator beside field: one of ${FILTER_OPERATORS.join(", ")} (or a group: all/any/not)`,
        });
        return;
      }
      if (groups.length + ops.length > 1) {
        const found = [...groups, ...ops].join(" and ");
        ctx.addIssue({
          code: "custom",
          message: `a filter needs exactly one operator, this one has ${found} — write each as its own filter (every top-level filter must match) or group them with all/any`,
        });
        return;
      }
      const group = groups[0];
      if (group !== undefined) {
        if ("field" in raw)
          ctx.addIssue({
            code: "custom",
            message: `${group} is a group and takes no field — put field in each filter inside it`,
          });
        if (group === "not" && Array.isArray(raw.not)) {
          ctx.addIssue({
            code: "custom",
            path: ["not"],
            message:
              "not takes one filter (a mapping), not a list — to negate several, write not: {all: [...]} or not: {any: [...]}",
          });
          return;
        }
        const list = raw[group];
        if (group !== "not" && (!Array.isArray(list) || list.length === 0)) {
          const one = typeof list === "object" && list !== null && !Array.isArray(list);
          ctx.addIssue({
            code: "custom",
            path: [group],
            message: Array.isArray(list)
              ? "an empty group: list at least one filter in it"
              : `expected a list of filters, got ${one ? `one filter — write ${group}: [{...}], a list even for one` : JSON.stringify(valueWithoutUrlCredentials(list))}`,
          });
          return;
        }
        const inner = group === "not" ? filterSchema : z.array(filterSchema);
        const parsed = inner.safeParse(raw[group], { reportInput: true });
        if (!parsed.success) {
          for (const issue of parsed.error.issues) {
            ctx.addIssue({ ...issue, path: [group, ...issue.path] } as never);
          }
        }
        return;
      }
      const op = ops[0] as FilterOperator;
      if (typeof raw.field !== "string" || raw.field.length === 0) {
        ctx.addIssue({
          code: "custom",
          path: ["field"],
          message:
            raw.field === undefined || raw.field === ""
              ? `the "${op}" operator needs a field (a dotted path such as pull_request.user.login)`
              : `expected text (a dotted path such as pull_request.user.login), got ${JSON.stringify(valueWithoutUrlCredentials(raw.field))}${
                  // `field: 2024` for a payload key of digits: YAML reads it as a number.
                  typeof raw.field === "number" ? " — a key of digits is text: put it in quotes" : ""
                }`,
        });
      } else if (raw.field.split(".").some((segment) => segment === "")) {
        // `a..b`, `.a`, `a.`, `headers.`: no value is ever found there, so the filter could never match.
        ctx.addIssue(
          quotingIssue(
            raw.field,
            (quoted) =>
              `${quoted} has an empty part between dots, so it never names a value — write a dotted path such as pull_request.user.login`,
            { path: ["field"] },
          ),
        );
      }
      const parsed = leafShapes[op].safeParse(raw[op], { reportInput: true });
      if (!parsed.success) {
        for (const issue of parsed.error.issues)
          ctx.addIssue({ ...issue, path: [op, ...issue.path] } as never);
      }
      // An unusable pattern would fail closed on every event (all ignored, silently): refuse it here.
      if (parsed.success && op === "regex") {
        // `regex: "\bfix\b"`: in double quotes YAML (and JSON) read \b as a backspace, so the pattern would never
        // match (and `not` of it would let everything through). Nobody means a raw backspace in a pattern.
        if ((raw.regex as string).includes("\b")) {
          ctx.addIssue({
            code: "custom",
            path: ["regex"],
            message:
              "holds a backspace character where \\b was meant: in \"double quotes\" YAML (and JSON) read \\b as a backspace — in YAML write the pattern in 'single quotes' ('\\bfix\\b'), or double the backslash (\"\\\\bfix\\\\b\")",
          });
          return;
        }
        const problem = regexProblem(raw.regex as string);
        if (problem !== undefined) {
          // RE2's reason ends with the part of the pattern it stopped at: not said of one a `${VAR}` gave.
          ctx.addIssue(
            quotingIssue(
              raw.regex,
              (_quoted, given) =>
                `not a valid RE2 pattern (${given ? problem.replace(/: `.*`$/s, "") : problem})${regexHint(raw.regex as string)}`,
              { path: ["regex"] },
            ),
          );
        }
      }
    })
    .transform((raw) => raw as Filter),
);
