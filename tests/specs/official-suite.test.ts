/**
 * The official JSON-Schema-Test-Suite (draft-07 and 2020-12, vendored in tests/fixtures/json-schema-test-suite)
 * through checkValueSync, with code specs (defineSpec) and run-time specs (resolveSpec). The promise under
 * test: a value the suite calls invalid is never reported valid, and nothing throws. A spec may be refused at
 * definition (a SpecError saying what to use instead), and a valid value may be refused where that is a
 * deliberate choice (`format` is asserted); both are counted, and bounded so the test cannot pass by refusing.
 *
 * Out of scope, skipped: groups that need the suite's remote schemas (http://localhost:1234/..., its remotes/
 * folder, and the whole refRemote.json, which is not vendored). Specs never load schemas from elsewhere.
 *
 * The suite's optional tests run too (the regex dialect, big numbers, draft-07's content keywords, every
 * format), under the same promise: this package asserts `format`, and its patterns are ECMA-262's.
 *
 * The numbers: summaryTable(runOfficialSuite()) in ./official-suite.support.ts.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { KINDS, loadSuite, runOfficialSuite, type SuiteResult } from "./official-suite.support.js";

/** Valid values refused on purpose, and why. */
const DELIBERATE_REFUSALS: Array<{ where: RegExp; why: string }> = [
  { where: /^draft2020-12\/format\.json › /, why: '"format" is asserted: a string that is not a valid email, date, uri… is refused' },
  {
    where: /› (properties|required properties) whose names are Javascript object property names › all present/,
    why: 'a field named "__proto__" is refused: a LangGraph checkpoint would not give it back as written (src/json/kept.ts)',
  },
];

/** Valid values of the optional tests refused on purpose, and why. */
const OPTIONAL_DELIBERATE_REFUSALS: Array<{ where: RegExp; why: string }> = [
  {
    where: /^draft(7|2020-12)\/optional\/format\/iri\.json › validation of IRIs › an IPvFuture host with an uppercase version letter is valid$/,
    why: "the IRI validator throws on an IPvFuture host; a format validator that throws has not said valid",
  },
];

let result: SuiteResult;
let optional: SuiteResult;

beforeAll(() => {
  result = runOfficialSuite();
  optional = runOfficialSuite(loadSuite("optional"));
});

const list = (offenders: Array<{ where: string; detail: string }>) => offenders.map((o) => `${o.where} — ${o.detail}`);

describe("the official JSON Schema test suite, through checkValueSync", () => {
  it("reads every vendored group; only groups that need the suite's remote schemas are skipped", () => {
    const groups = loadSuite();
    expect(groups.length).toBeGreaterThan(600);
    expect(result.skippedRemote.length).toBeLessThanOrEqual(10);
    for (const name of result.skippedRemote) {
      const group = groups.find((g) => `${g.dialect}/${g.file} › ${g.description}` === name)!;
      expect(JSON.stringify(group.schema), name).toContain("http://localhost:1234/");
    }
    const cases = groups.reduce((sum, g) => sum + g.tests.length, 0);
    const skippedCases = groups
      .filter((g) => result.skippedRemote.includes(`${g.dialect}/${g.file} › ${g.description}`))
      .reduce((sum, g) => sum + g.tests.length, 0);
    for (const kind of KINDS) expect(result.tallies.draft7[kind].cases + result.tallies["draft2020-12"][kind].cases).toBe(cases - skippedCases);
  });

  it.each(KINDS)("%s specs: no value the suite calls invalid is reported valid, and nothing throws", (kind) => {
    expect(list(result.offenders[kind]), `false approvals and throws with ${kind} specs`).toEqual([]);
    for (const tallies of Object.values(result.tallies)) {
      expect(tallies[kind].falseApprovals).toBe(0);
      expect(tallies[kind].throws).toBe(0);
    }
  });

  it.each(KINDS)("%s specs: a valid value is refused only where that is a deliberate choice", (kind) => {
    const unexplained = result.falseRefusals[kind].filter((o) => !DELIBERATE_REFUSALS.some((d) => d.where.test(o.where)));
    expect(list(unexplained), `valid values refused with ${kind} specs`).toEqual([]);
  });

  it("agrees with the suite on nearly every case it does not refuse at definition (it cannot pass by refusing)", () => {
    // Measured: draft-07 874 (code) and 842 (run-time) of 904; 2020-12 1135 and 1093 of 1250.
    const floors = { draft7: { code: 870, "run-time": 838 }, "draft2020-12": { code: 1130, "run-time": 1088 } } as const;
    for (const dialect of ["draft7", "draft2020-12"] as const) {
      for (const kind of KINDS) {
        const t = result.tallies[dialect][kind];
        expect(t.agreed, `${dialect} ${kind}`).toBeGreaterThanOrEqual(floors[dialect][kind]);
        expect(t.agreed + t.refusedByDesign + t.falseRefusals + t.falseApprovals + t.throws).toBe(t.cases);
      }
    }
  });

  it("refuses few groups of code specs at definition, each with a SpecError", () => {
    // Measured: draft-07 5 of 246 groups (boolean root schemas, idn-email, refs resolved through an $id's base URI);
    // 2020-12 31 of 361 (the same, $dynamicRef, unevaluatedItems with contains, strict mode's min/maxContains and empty enum).
    expect(result.tallies.draft7.code.refusedGroups).toBeLessThanOrEqual(7);
    expect(result.tallies["draft2020-12"].code.refusedGroups).toBeLessThanOrEqual(33);
    for (const refusal of [...result.refusals.code, ...result.refusals["run-time"]]) expect(refusal.detail).toMatch(/^Spec "(suite|inline)"/);
  });
});

describe("the suite's optional tests (regex dialect, big numbers, content, formats), through checkValueSync", () => {
  it("reads every vendored optional file of both dialects", () => {
    const files = new Set(loadSuite("optional").map((g) => `${g.dialect}/${g.file}`));
    for (const dialect of ["draft7", "draft2020-12"]) {
      for (const file of [
        "ecmascript-regex",
        "non-bmp-regex",
        "float-overflow",
        "bignum",
        "format/date-time",
        "format/hostname",
        "format/idn-hostname",
        "format/uri",
        "format/uri-template",
      ]) {
        expect(files, `${dialect}/optional/${file}.json`).toContain(`${dialect}/optional/${file}.json`);
      }
    }
    expect(files).toContain("draft7/optional/content.json");
    expect(files).toContain("draft2020-12/optional/format/duration.json");
    expect(optional.skippedRemote).toEqual([]);
  });

  it.each(KINDS)("%s specs: no value the optional tests call invalid is reported valid, and nothing throws", (kind) => {
    expect(list(optional.offenders[kind]), `false approvals and throws with ${kind} specs`).toEqual([]);
    for (const tallies of Object.values(optional.tallies)) {
      expect(tallies[kind].falseApprovals).toBe(0);
      expect(tallies[kind].throws).toBe(0);
    }
  });

  it.each(KINDS)("%s specs: a valid value is refused only where that is a deliberate choice", (kind) => {
    const unexplained = optional.falseRefusals[kind].filter((o) => !OPTIONAL_DELIBERATE_REFUSALS.some((d) => d.where.test(o.where)));
    expect(list(unexplained), `valid values refused with ${kind} specs`).toEqual([]);
  });

  it("agrees on nearly every case; only idn-email and an unknown format are refused at definition", () => {
    // Measured: draft-07 756 of 782 with either kind of spec; 2020-12 834 of 860.
    const floors = { draft7: 751, "draft2020-12": 829 } as const;
    for (const dialect of ["draft7", "draft2020-12"] as const) {
      for (const kind of KINDS) {
        const t = optional.tallies[dialect][kind];
        expect(t.agreed, `${dialect} ${kind}`).toBeGreaterThanOrEqual(floors[dialect]);
        expect(t.agreed + t.refusedByDesign + t.falseRefusals + t.falseApprovals + t.throws).toBe(t.cases);
      }
    }
    for (const kind of KINDS) {
      for (const refusal of optional.refusals[kind]) expect(refusal.where).toMatch(/\/optional\/format\/(idn-email|unknown)\.json › /);
    }
  });
});
