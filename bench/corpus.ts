/**
 * Benchmark: the whole JSONSchemaBench corpus (github.com/guidance-ai/jsonschemabench, folder maskbench/data,
 * ~11,300 real-world schemas), when it is on disk (see docs/development.md for fetching it at the pinned commit).
 * Each schema is defined as a code-defined spec and as a run-time spec under the default limits; its instances
 * (the corpus's own, values drawn for it, mutations) are judged by the package and by @hyperjump/json-schema.
 * Reported per source: schemas accepted in each kind, the refusal classes with their counts, false approvals
 * (a value the reference refuses passing), throws, and false refusals. Then, for the corpus and for the vendored
 * sample (always, the corpus on disk or not), the share of accepted schemas sent to OpenAI with `strict: true`.
 *
 *   npm run bench -- --only corpus            # every schema (15 to 25 minutes on two busy cores)
 *   npm run bench -- --quick --only corpus    # every 40th
 *   JSONSCHEMABENCH_DIR=path/to/maskbench/data npm run bench -- --only corpus
 */
import { existsSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { corpusFiles, corpusSource, MODES, type Mode, type SchemaOutcome } from "../testkit/conformance.js";
import { strictShare, type StrictShare } from "../testkit/strict-share.js";
import { table, type BenchOptions, type BenchResult } from "./common.js";

/** The pinned commit of the corpus (the vendored sample's too: tests/fixtures/jsonschemabench/README.md). */
export const CORPUS_COMMIT = "ba103c73756198dd9b149ddc7db7867da7a077f6";
const DEFAULT_DIR = "jsonschemabench/maskbench/data";
const TITLE = "9. JSONSchemaBench: real-world schemas";

export interface CorpusFigures {
  sources: Array<{
    source: string;
    schemas: number;
    accepted: Record<Mode, number>;
    judged: number;
    falseApprovals: number;
    throws: number;
    falseRefusals: number;
  }>;
  refusals: Record<Mode, Record<string, number>>;
  outcomes: SchemaOutcome[];
}

/** The worker's entry: tsx's loader registered in the worker's own thread, then the TypeScript worker. */
const WORKER_ENTRY = `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then(({ register }) => { register(); return import(${JSON.stringify(new URL("./corpus-worker.ts", import.meta.url).href)}); });`;

/** How long one schema may take to judge (its usual time is well under a second) before its worker is stopped. */
export const SCHEMA_WATCHDOG_MS = 120_000;

/**
 * Judge every `every`-th corpus file in `dir` (see testkit/conformance.ts), each in a worker thread that is
 * stopped, and replaced, when a schema takes longer than `watchdogMs`: the outcome then says which validator
 * never came back. A hang of the package counts as a throw; one of the reference leaves the schema unjudged.
 */
export async function measureCorpus(dir: string, every = 1, log: (line: string) => void = () => {}, watchdogMs = SCHEMA_WATCHDOG_MS): Promise<CorpusFigures> {
  const files = corpusFiles(dir).filter((_, i) => i % every === 0);
  const outcomes: SchemaOutcome[] = [];
  let worker: Worker | undefined;
  try {
    for (const [i, file] of files.entries()) {
      worker ??= new Worker(WORKER_ENTRY, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 4_096 } });
      const outcome = await judgeInWorker(worker, dir, file, watchdogMs);
      if (outcome.hung !== undefined) {
        await worker.terminate();
        worker = undefined;
        log(`corpus: ${file} stopped (${outcome.hung})`);
      }
      outcomes.push(outcome);
      if (i % 500 === 499) log(`corpus: ${i + 1} of ${files.length} schemas`);
    }
  } finally {
    await worker?.terminate();
  }
  const refusals = { "code-defined": {}, "run-time": {} } as CorpusFigures["refusals"];
  for (const o of outcomes) {
    for (const mode of MODES) {
      const m = o.modes[mode];
      if (!m.accepted) refusals[mode][m.refusalClass] = (refusals[mode][m.refusalClass] ?? 0) + 1;
    }
  }
  const sources = [...new Set(outcomes.map((o) => o.source))].sort().map((source) => {
    const of = outcomes.filter((o) => o.source === source);
    const count = (pick: (o: SchemaOutcome) => number) => of.reduce((n, o) => n + pick(o), 0);
    return {
      source,
      schemas: of.length,
      accepted: Object.fromEntries(MODES.map((mode) => [mode, of.filter((o) => o.modes[mode].accepted).length])) as Record<Mode, number>,
      judged: count((o) => o.judged),
      falseApprovals: count((o) => o.falseApprovals.length),
      throws: count((o) => o.throws.length),
      falseRefusals: count((o) => o.falseRefusals.length),
    };
  });
  return { sources, refusals, outcomes };
}

function judgeInWorker(worker: Worker, dir: string, file: string, watchdogMs: number): Promise<SchemaOutcome> {
  return new Promise((resolve) => {
    let phase = "starting";
    let modes = {} as SchemaOutcome["modes"];
    const done = () => {
      clearTimeout(timer);
      worker.off("message", onMessage);
      worker.off("error", onError);
    };
    const onMessage = (message: { type: "phase"; phase: string; modes: SchemaOutcome["modes"] } | { type: "outcome"; outcome: SchemaOutcome }) => {
      if (message.type === "phase") ({ phase, modes } = message);
      else {
        done();
        resolve(message.outcome);
      }
    };
    const onError = (error: Error) => stopped(`the worker failed: ${String(error?.message ?? error).slice(0, 200)}`);
    // A step that never came back, or a worker that died (out of memory): the outcome says which validator it was in.
    const stopped = (why: string) => {
      done();
      const byPackage = phase.startsWith("the package");
      const hung = `${phase}: ${why}`;
      for (const mode of MODES) modes[mode] ??= { accepted: false, refusalClass: "hung", message: hung };
      resolve({
        file,
        source: corpusSource(file),
        modes,
        judged: 0,
        falseApprovals: [],
        falseRefusals: [],
        throws: byPackage ? [{ file, mode: "code-defined", instance: "(hung)", detail: hung }] : [],
        labelDisagreements: 0,
        hung,
        ...(byPackage ? {} : { referenceFailed: `hung: ${hung}` }),
      });
    };
    const timer = setTimeout(() => stopped(`no answer after ${watchdogMs} ms`), watchdogMs);
    worker.on("message", onMessage);
    worker.on("error", onError);
    worker.postMessage({ dir, file });
  });
}

/** The schemas compared with nothing: the reference could not compile them, or a step never came back. */
function referenceGaps(outcomes: SchemaOutcome[]): string {
  const failed = outcomes.filter((o) => o.referenceFailed !== undefined);
  const hung = outcomes.filter((o) => o.hung !== undefined);
  const lines = [
    `Schemas whose instances were not compared: ${failed.length} the reference validator could not compile or judge` +
      ` (${failed.filter((o) => o.hung !== undefined).length} of them hung on an instance), and ${hung.length} in all stopped by the watchdog:`,
  ];
  for (const o of hung) lines.push(`- ${o.file}: ${o.hung}`);
  return lines.join("\n");
}

const pct = (n: number, of: number) => (of === 0 ? "—" : `${((100 * n) / of).toFixed(1)} %`);

/** The vendored sample (tests/fixtures/jsonschemabench), measured for the strict share whether or not the corpus is on disk. */
const SAMPLE_DIR = "tests/fixtures/jsonschemabench/data";

/** What each provider's `auto` request is, for the table. */
const MODE_SENT: Record<string, string> = {
  openai: "json_schema (strict form)",
  anthropic: "forced tool (strict)",
  ollama: "format (the schema)",
  google: "responseJsonSchema (subset)",
  "google-genai": "responseSchema (subset)",
};

/** The share of accepted schemas sent to OpenAI with `strict: true`, before the strict form and now: rows, a target and a subsection. */
function strictFigures(name: string, share: StrictShare): { rows: BenchResult["rows"]; target: BenchResult["targets"][number]; markdown: string } {
  const reasons = Object.entries(share.notStrict).sort((a, b) => b[1] - a[1]);
  return {
    rows: [
      { label: `${name}: accepted run-time specs sent to OpenAI with strict: true, before the strict form`, value: share.before, unit: "schemas" },
      { label: `${name}: accepted run-time specs sent to OpenAI with strict: true, in the strict form`, value: share.after, unit: "schemas" },
      ...Object.entries(share.providers).flatMap(([provider, p]) => [
        { label: `${name}: ${provider} auto requests enforced, before`, value: p.before, unit: "schemas" },
        { label: `${name}: ${provider} auto requests enforced, now`, value: p.after, unit: "schemas" },
        { label: `${name}: ${provider} requests the preflight saves`, value: p.saved, unit: "requests" },
        { label: `${name}: ${provider} auto requests enforced whole (no keyword left out)`, value: p.whole, unit: "schemas" },
      ]),
    ],
    target: {
      description: `${name}: ≥ 90 % of the accepted schemas go to OpenAI with strict: true`,
      met: share.after >= 0.9 * share.accepted,
      detail: pct(share.after, share.accepted),
    },
    markdown: [
      `### OpenAI strict structured outputs: ${name}`,
      "",
      `Of ${share.accepted} schemas accepted as run-time specs, how many the json_schema request sends with \`strict: true\`: before, only a schema that already fit strict mode as written (every object closed, every field required, strict mode's keywords only); now, the strict form of any schema (src/providers/strict-form.ts), within OpenAI's documented limits.`,
      "",
      table(
        ["source", "accepted", "strict before", "strict now"],
        [
          ...share.bySource.map((s) => [s.source, s.accepted, `${s.before} (${pct(s.before, s.accepted)})`, `${s.after} (${pct(s.after, s.accepted)})`]),
          ["**all**", share.accepted, `${share.before} (${pct(share.before, share.accepted)})`, `${share.after} (${pct(share.after, share.accepted)})`],
        ],
      ),
      "",
      reasons.length === 0 ? "Every accepted schema goes strict." : "Why the others are sent without strict (recorded on the attempt as `notStrict`):",
      "",
      ...(reasons.length === 0 ? [] : [table(["reason", "schemas"], reasons)]),
      "",
      `### Enforced modes per provider: ${name}`,
      "",
      `Of the same ${share.accepted} schemas, how many each provider's \`auto\` request sends in a mode where the provider holds the answer to the schema while it decodes (strict, or constrained decoding): before the strict forms and preflights (OpenAI strict only for a schema that fit as written; Anthropic's forced tool never strict) and now; and how many requests the preflight saves (a strict request past a documented limit, which the provider refuses with a 400 and a retry without strict). Ollama's \`format\` and Gemini's \`responseSchema\` constrain decoding to the schema as sent (Gemini's in its OpenAPI subset), then as now; the google row, new, sends \`responseJsonSchema\` (JSON Schema in Gemini's documented subset). "Enforced whole": enforced with no keyword of the spec's schema left out (the validator judges every keyword either way).`,
      "",
      table(
        ["provider", "auto sends", "enforced before", "enforced now", "enforced whole", "requests the preflight saves"],
        Object.entries(share.providers).map(([provider, p]) => [
          provider,
          MODE_SENT[provider] ?? "",
          `${p.before} (${pct(p.before, share.accepted)})`,
          `${p.after} (${pct(p.after, share.accepted)})`,
          `${p.whole} (${pct(p.whole, share.accepted)})`,
          p.saved,
        ]),
      ),
    ].join("\n"),
  };
}

export async function run(opts: BenchOptions): Promise<BenchResult> {
  const dir = process.env.JSONSCHEMABENCH_DIR ?? DEFAULT_DIR;
  const base = { id: "corpus", title: TITLE, comparisons: [], checks: [] };
  const sample = strictFigures("the vendored sample", strictShare(SAMPLE_DIR));
  if (!existsSync(dir)) {
    const reason = `the corpus is not at ${dir} (fetch it as docs/development.md says, or set JSONSCHEMABENCH_DIR)`;
    return {
      ...base,
      rows: sample.rows,
      targets: [sample.target],
      markdown: `## ${TITLE}\n\nThe whole corpus was not run: ${reason}.\n\n${sample.markdown}`,
      notRun: [reason],
    };
  }
  const every = opts.quick ? 40 : 1;
  const figures = await measureCorpus(dir, every, (line) => process.stderr.write(`${line}\n`));
  const whole = strictFigures(opts.quick ? "every 40th schema of the corpus" : "the whole corpus", strictShare(dir, every));
  const total = (pick: (s: CorpusFigures["sources"][number]) => number) => figures.sources.reduce((n, s) => n + pick(s), 0);
  const schemas = total((s) => s.schemas);
  const code = total((s) => s.accepted["code-defined"]);
  const runtime = total((s) => s.accepted["run-time"]);
  const falseApprovals = total((s) => s.falseApprovals);
  const throws = total((s) => s.throws);
  const rows = [
    { label: "schemas", value: schemas, unit: "schemas" },
    { label: "accepted as code-defined specs", value: code, unit: "schemas" },
    { label: "accepted as run-time specs", value: runtime, unit: "schemas" },
    { label: "instances judged by both validators", value: total((s) => s.judged), unit: "instances" },
  ];
  const refusalTable = (mode: Mode) =>
    table(
      ["refusal class", "schemas"],
      Object.entries(figures.refusals[mode])
        .sort((a, b) => b[1] - a[1])
        .map(([name, n]) => [name, n]),
    );
  const markdown = [
    `## ${TITLE}`,
    "",
    `The corpus at commit \`${CORPUS_COMMIT.slice(0, 10)}\`, ${opts.quick ? "every 40th schema" : "every schema"} present in \`${dir}\`: each defined as a code-defined spec and as a run-time spec under the default limits, ` +
      "its instances (the corpus's own, values drawn for it, mutations of the valid ones) judged by the check step and by `@hyperjump/json-schema`. " +
      "A false approval is a value the reference refuses that the package passes; a false refusal the reverse.",
    "",
    table(
      ["source", "schemas", "code-defined", "run-time", "instances", "false approvals", "throws", "false refusals"],
      [
        ...figures.sources.map((s) => [
          s.source,
          s.schemas,
          `${s.accepted["code-defined"]} (${pct(s.accepted["code-defined"], s.schemas)})`,
          `${s.accepted["run-time"]} (${pct(s.accepted["run-time"], s.schemas)})`,
          s.judged,
          s.falseApprovals,
          s.throws,
          s.falseRefusals,
        ]),
        [
          "**all**",
          schemas,
          `${code} (${pct(code, schemas)})`,
          `${runtime} (${pct(runtime, schemas)})`,
          total((s) => s.judged),
          falseApprovals,
          throws,
          total((s) => s.falseRefusals),
        ],
      ],
    ),
    "",
    referenceGaps(figures.outcomes),
    "",
    "Refusals of code-defined specs:",
    "",
    refusalTable("code-defined"),
    "",
    "Refusals of run-time specs:",
    "",
    refusalTable("run-time"),
    "",
    whole.markdown,
    "",
    sample.markdown,
  ].join("\n");
  return {
    ...base,
    rows: [...rows, ...whole.rows, ...sample.rows],
    checks: [
      { description: "no false approval on the corpus", ok: falseApprovals === 0, detail: `${falseApprovals}` },
      { description: "nothing throws on the corpus", ok: throws === 0, detail: `${throws}` },
    ],
    targets: [
      { description: "code-defined specs accept ≥ 90 % of the schemas as found", met: code >= 0.9 * schemas, detail: pct(code, schemas) },
      { description: "run-time specs accept ≥ 85 % of the schemas as found (default limits)", met: runtime >= 0.85 * schemas, detail: pct(runtime, schemas) },
      whole.target,
      sample.target,
    ],
    markdown,
  };
}
