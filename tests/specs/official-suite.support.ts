/**
 * Runs the official JSON-Schema-Test-Suite (vendored in tests/fixtures/json-schema-test-suite) through
 * `checkValueSync`, once with code specs (`defineSpec`) and once with run-time specs (`resolveSpec`),
 * and classifies every case. The suite has two parts: the required tests (each dialect's top-level files)
 * and the optional ones (its optional/ folder: regex dialect, big numbers, content, formats). Used by
 * tests/specs/official-suite.test.ts; `summaryTable` gives the numbers for documentation:
 *
 *   npx tsx -e 'import("./tests/specs/official-suite.support.ts").then((m) => console.log(m.summaryTable(m.runOfficialSuite())))'
 *   npx tsx -e 'import("./tests/specs/official-suite.support.ts").then((m) => console.log(m.summaryTable(m.runOfficialSuite(m.loadSuite("optional")))))'
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SpecError } from "../../src/errors.js";
import { resolveSpec } from "../../src/specs/registry.js";
import { defineSpec, type JsonSchema, type Spec } from "../../src/specs/spec.js";
import { checkValueSync } from "../../src/specs/check.js";

export const SUITE_DIR = join(dirname(fileURLToPath(import.meta.url)), "../fixtures/json-schema-test-suite");
export const DIALECTS = ["draft7", "draft2020-12"] as const;
export const KINDS = ["code", "run-time"] as const;
export type SuiteDialect = (typeof DIALECTS)[number];
export type SpecKind = (typeof KINDS)[number];
export type SuitePart = "required" | "optional";

/** The folders of each part, under each dialect's folder (the optional files vendored: see the fixtures' README). */
const PART_FOLDERS: Record<SuitePart, string[]> = { required: [""], optional: ["optional", "optional/format"] };

const META_2020_12 = "https://json-schema.org/draft/2020-12/schema";
/** Where the suite's remote schemas live; this harness does not serve them (they are not vendored). */
const REMOTE_BASE = "http://localhost:1234/";

export interface SuiteTest {
  description: string;
  data: unknown;
  valid: boolean;
}

export interface SuiteGroup {
  dialect: SuiteDialect;
  file: string;
  description: string;
  schema: unknown;
  tests: SuiteTest[];
}

/** How one case came out. */
export type Outcome = "agreed" | "refused by design" | "false refusal" | "false approval" | "throw";

export interface Offender {
  where: string;
  outcome: Outcome;
  detail: string;
}

export interface Tally {
  groups: number;
  cases: number;
  agreed: number;
  refusedByDesign: number;
  /** Groups whose spec was refused at definition (with a SpecError). */
  refusedGroups: number;
  falseRefusals: number;
  falseApprovals: number;
  throws: number;
}

export interface SuiteResult {
  tallies: Record<SuiteDialect, Record<SpecKind, Tally>>;
  /** Every false approval and throw (must be none), then every false refusal. */
  offenders: Record<SpecKind, Offender[]>;
  falseRefusals: Record<SpecKind, Offender[]>;
  /** The groups refused at definition, with the SpecError's message. */
  refusals: Record<SpecKind, Offender[]>;
  /** Groups skipped because they need the suite's remote schemas ("file › group"). */
  skippedRemote: string[];
}

/** Every group of one part of the vendored suite, in a stable order; `file` is the path under the dialect's folder. */
export function loadSuite(part: SuitePart = "required"): SuiteGroup[] {
  const groups: SuiteGroup[] = [];
  for (const dialect of DIALECTS) {
    for (const folder of PART_FOLDERS[part]) {
      const dir = join(SUITE_DIR, dialect, folder);
      for (const name of readdirSync(dir)
        .filter((f) => f.endsWith(".json"))
        .sort()) {
        const file = folder === "" ? name : `${folder}/${name}`;
        const parsed = JSON.parse(readFileSync(join(dir, name), "utf8")) as Array<{ description: string; schema: unknown; tests: SuiteTest[] }>;
        for (const group of parsed) groups.push({ dialect, file, description: group.description, schema: group.schema, tests: group.tests });
      }
    }
  }
  return groups;
}

/**
 * Whether a group needs one of the suite's remote schemas (http://localhost:1234/..., its remotes/ folder):
 * a `$ref`, `$dynamicRef` or `$schema` that resolves to a document under that base which no `$id` of the
 * schema itself defines. Remote references are out of scope: specs may not load schemas from elsewhere.
 */
export function needsRemote(schema: unknown): boolean {
  const defined = new Set<string>();
  const wanted: string[] = [];
  const documentOf = (uri: string) => uri.replace(/#.*$/, "");
  const walk = (node: unknown, base: string, top: boolean) => {
    if (node === null || typeof node !== "object") return;
    if (Array.isArray(node)) {
      for (const item of node) walk(item, base, false);
      return;
    }
    const record = node as Record<string, unknown>;
    let here = base;
    if (typeof record.$id === "string") {
      here = new URL(record.$id, base).href;
      defined.add(documentOf(here));
    }
    for (const key of ["$ref", "$dynamicRef"]) if (typeof record[key] === "string") wanted.push(documentOf(new URL(record[key] as string, here).href));
    if (top && typeof record.$schema === "string" && record.$schema.startsWith(REMOTE_BASE)) wanted.push(documentOf(record.$schema));
    for (const [key, child] of Object.entries(record)) {
      // Values, not subschemas: a "$ref" inside them is data.
      if (key === "const" || key === "enum" || key === "default" || key === "examples") continue;
      walk(child, here, false);
    }
  };
  walk(schema, "https://suite.invalid/root.json", true);
  return wanted.some((uri) => uri.startsWith(REMOTE_BASE) && !defined.has(uri));
}

/** The schema as the harness gives it: a 2020-12 group without `$schema` is a 2020-12 schema. */
export function suiteSchema(group: SuiteGroup): unknown {
  const { schema } = group;
  if (group.dialect !== "draft2020-12" || schema === null || typeof schema !== "object" || Array.isArray(schema)) return schema;
  if (Object.hasOwn(schema, "$schema")) return schema;
  return { $schema: META_2020_12, ...(schema as Record<string, unknown>) };
}

/** The spec of one kind for a suite schema; throws what defineSpec/resolveSpec throw. */
export function buildSpec(kind: SpecKind, schema: unknown): Spec {
  if (kind === "code") return defineSpec({ name: "suite", description: "", schema: schema as JsonSchema });
  return resolveSpec({ name: "suite", schema: schema as JsonSchema });
}

/** What the check step says when the schema check threw or gave no boolean verdict. */
const CRASHED = /could not judge the value|could not give a verdict/;

const describeError = (error: unknown) => `${(error as Error)?.name ?? typeof error}: ${String((error as Error)?.message ?? error).slice(0, 300)}`;

/** Run every case of the suite with both kinds of spec. */
export function runOfficialSuite(groups: SuiteGroup[] = loadSuite()): SuiteResult {
  const emptyTally = (): Tally => ({ groups: 0, cases: 0, agreed: 0, refusedByDesign: 0, refusedGroups: 0, falseRefusals: 0, falseApprovals: 0, throws: 0 });
  const tallies = Object.fromEntries(DIALECTS.map((d) => [d, Object.fromEntries(KINDS.map((k) => [k, emptyTally()]))])) as SuiteResult["tallies"];
  const offenders: SuiteResult["offenders"] = { code: [], "run-time": [] };
  const falseRefusals: SuiteResult["falseRefusals"] = { code: [], "run-time": [] };
  const refusals: SuiteResult["refusals"] = { code: [], "run-time": [] };
  const skippedRemote: string[] = [];

  for (const group of groups) {
    const groupName = `${group.dialect}/${group.file} › ${group.description}`;
    if (needsRemote(group.schema)) {
      skippedRemote.push(groupName);
      continue;
    }
    const schema = suiteSchema(group);
    for (const kind of KINDS) {
      const tally = tallies[group.dialect][kind];
      tally.groups++;
      tally.cases += group.tests.length;
      let spec: Spec;
      try {
        spec = buildSpec(kind, schema);
      } catch (error) {
        // A stack overflow while compiling is a crash, even when defineSpec reports it as a SpecError.
        if (error instanceof SpecError && !/Maximum call stack/.test(error.message)) {
          tally.refusedGroups++;
          tally.refusedByDesign += group.tests.length;
          refusals[kind].push({ where: groupName, outcome: "refused by design", detail: error.message.slice(0, 400) });
        } else {
          tally.throws += group.tests.length;
          offenders[kind].push({ where: groupName, outcome: "throw", detail: `defining the spec threw ${describeError(error)}` });
        }
        continue;
      }
      for (const test of group.tests) {
        const where = `${groupName} › ${test.description}`;
        let valid: boolean;
        try {
          const report = checkValueSync(spec, test.data);
          // The check step turns a validator that throws (a stack overflow included) into "invalid"; that is a crash all the same.
          const crash = report.errors.find((message) => CRASHED.test(message));
          if (crash !== undefined) throw new Error(crash);
          valid = report.valid;
        } catch (error) {
          tally.throws++;
          offenders[kind].push({ where, outcome: "throw", detail: `checkValueSync threw or could not judge: ${describeError(error)}` });
          continue;
        }
        if (valid === test.valid) tally.agreed++;
        else if (test.valid) {
          tally.falseRefusals++;
          falseRefusals[kind].push({ where, outcome: "false refusal", detail: JSON.stringify(test.data)?.slice(0, 200) ?? "undefined" });
        } else {
          tally.falseApprovals++;
          offenders[kind].push({ where, outcome: "false approval", detail: JSON.stringify(test.data)?.slice(0, 200) ?? "undefined" });
        }
      }
    }
  }
  return { tallies, offenders, falseRefusals, refusals, skippedRemote };
}

/** The numbers as a Markdown table: one row per dialect and kind of spec. */
export function summaryTable(result: SuiteResult): string {
  const rows = [
    "| Dialect | Spec | Cases | Agreed | Refused by design | False refusals | False approvals | Throws |",
    "|---|---|---:|---:|---:|---:|---:|---:|",
  ];
  for (const dialect of DIALECTS) {
    for (const kind of KINDS) {
      const t = result.tallies[dialect][kind];
      rows.push(
        `| ${dialect} | ${kind} | ${t.cases} | ${t.agreed} | ${t.refusedByDesign} (${t.refusedGroups} groups) | ${t.falseRefusals} | ${t.falseApprovals} | ${t.throws} |`,
      );
    }
  }
  return `${rows.join("\n")}\n\nSkipped (need the suite's remote schemas): ${result.skippedRemote.length} groups.`;
}
