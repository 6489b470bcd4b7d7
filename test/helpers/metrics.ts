/** The value of one sample line of a Prometheus text, e.g. `svc_webhook_requests_total{route="pr",status="202"}`. */
export function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Scrapes `/metrics` at `base` (`http://127.0.0.1:<port>`) and reads one series from it. */
export async function scrapedSample(base: string, series: string): Promise<number | undefined> {
  const res = await fetch(`${base}/metrics`);
  return sample(await res.text(), series);
}

/** One sample of a scrape: its name, its labels (values unescaped) and its value. */
export interface ScrapedSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL_PAIR = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(?:,|$)/;
const VALUE = /^(?:NaN|[+-]Inf|[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

/** The families a sample name belongs to, as the text format groups them (`x_bucket` of histogram `x`...). */
function familyOf(name: string, type: string | undefined, family: string | undefined): boolean {
  if (family === undefined) return false;
  if (name === family) return type !== "histogram";
  const suffix = name.slice(family.length);
  if (!name.startsWith(family)) return false;
  if (type === "histogram") return ["_bucket", "_sum", "_count"].includes(suffix);
  if (type === "summary") return ["_sum", "_count"].includes(suffix);
  return false;
}

/**
 * Reads a Prometheus text-format (0.0.4) exposition strictly, as a scraper would refuse it: HELP and TYPE
 * before their family's samples, one of each per family, every sample inside its family's block, label
 * values escaped (`\\`, `\"`, `\n` only), values as the format spells them, no series twice, counters named
 * `_total`, histograms with `le` ascending to `+Inf`, cumulative buckets and `+Inf` equal to `_count`.
 * Returns what is wrong (empty when nothing is) and the samples.
 */
export function readExposition(text: string): { problems: string[]; samples: ScrapedSample[] } {
  const problems: string[] = [];
  const samples: ScrapedSample[] = [];
  const families = new Map<string, { type?: string; help?: string; samples: ScrapedSample[] }>();
  const series = new Set<string>();
  let current: string | undefined;
  if (!text.endsWith("\n")) problems.push("the text does not end with a line break");
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("#")) {
      const comment = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (comment === null) continue;
      const [, kind, name = "", rest = ""] = comment;
      if (!METRIC_NAME.test(name)) problems.push(`bad metric name: ${line}`);
      let family = families.get(name);
      if (family === undefined) {
        family = { samples: [] };
        families.set(name, family);
      } else if (family.samples.length > 0) problems.push(`${kind} after samples: ${line}`);
      if (kind === "TYPE") {
        if (family.type !== undefined) problems.push(`a second TYPE: ${line}`);
        if (!TYPES.has(rest)) problems.push(`unknown type: ${line}`);
        family.type = rest;
      } else {
        if (family.help !== undefined) problems.push(`a second HELP: ${line}`);
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ""))) problems.push(`bad escape in HELP: ${line}`);
        family.help = rest;
      }
      current = name;
      continue;
    }
    const match = SAMPLE_LINE.exec(line);
    if (match === null) {
      problems.push(`not a sample line: ${JSON.stringify(line)}`);
      continue;
    }
    const [, name = "", labelText = "", valueText = ""] = match;
    const labels: Record<string, string> = {};
    for (let rest = labelText; rest !== ""; ) {
      const pair = LABEL_PAIR.exec(rest);
      if (pair === null) {
        problems.push(`bad labels: ${JSON.stringify(line)}`);
        break;
      }
      const [whole, label = "", escaped = ""] = pair;
      if (Object.hasOwn(labels, label)) problems.push(`label ${label} twice: ${line}`);
      labels[label] = escaped.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
      rest = rest.slice(whole.length);
    }
    if (!VALUE.test(valueText)) problems.push(`bad value: ${line}`);
    const family = current === undefined ? undefined : families.get(current);
    if (!familyOf(name, family?.type, current)) problems.push(`sample outside its family's block: ${line}`);
    const key = `${name}{${labelText}}`;
    if (series.has(key)) problems.push(`series twice: ${key}`);
    series.add(key);
    const value = valueText === "+Inf" ? Number.POSITIVE_INFINITY : Number(valueText);
    const sample = { name, labels, value };
    samples.push(sample);
    family?.samples.push(sample);
  }
  for (const [name, family] of families) {
    if (family.type === undefined) problems.push(`no TYPE for ${name}`);
    if (family.type === "counter" && !name.endsWith("_total"))
      problems.push(`counter not named _total: ${name}`);
    if (family.type !== "histogram") continue;
    const groups = new Map<string, { les: number[]; counts: number[]; count?: number; sum?: number }>();
    for (const s of family.samples) {
      const { le, ...rest } = s.labels;
      const key = JSON.stringify(Object.entries(rest).sort());
      const group = groups.get(key) ?? { les: [], counts: [] };
      groups.set(key, group);
      if (s.name.endsWith("_bucket")) {
        group.les.push(le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le));
        group.counts.push(s.value);
      } else if (s.name.endsWith("_count")) group.count = s.value;
      else group.sum = s.value;
    }
    for (const [key, group] of groups) {
      const where = `${name}${key}`;
      if (group.les.at(-1) !== Number.POSITIVE_INFINITY) problems.push(`${where}: no +Inf bucket last`);
      for (let i = 1; i < group.les.length; i++) {
        if (!((group.les[i] as number) > (group.les[i - 1] as number)))
          problems.push(`${where}: le not ascending`);
        if ((group.counts[i] as number) < (group.counts[i - 1] as number))
          problems.push(`${where}: buckets not cumulative`);
      }
      if (group.counts.at(-1) !== group.count) problems.push(`${where}: +Inf bucket is not _count`);
      if (group.sum === undefined) problems.push(`${where}: no _sum`);
    }
  }
  return { problems, samples };
}
