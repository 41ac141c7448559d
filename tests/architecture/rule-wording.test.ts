/**
 * Tests match a built-in business rule through the rule — its id, its exported
 * message function (e.g. `deploymentConfigMessages`), its description read from
 * the spec — never through a copy of its wording, so rewording a rule touches
 * one code file. This guard reads the wording from the built-in specs' sources
 * (their message functions and rule descriptions) and fails when a test file
 * holds a piece of it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const BUILTIN = join(ROOT, "src/specs/builtin");

/** The literal pieces of a rule's wording: string and template literals, split at their `${…}` holes; only pieces with words. */
export function wordingPieces(source: string): string[] {
  const messages = source.match(/export const \w+Messages = \{[\s\S]*?\n\};/)?.[0] ?? "";
  const descriptions = [...source.matchAll(/^\s+description:\s*(["'`][\s\S]*?["'`]),?\n\s+inputs:/gm)].map((m) => m[1]);
  const pieces: string[] = [];
  for (const text of [messages, ...descriptions]) {
    for (const m of text.matchAll(/`((?:[^`\\]|\\.)*)`|"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'/g)) {
      for (const piece of (m[1] ?? m[2] ?? m[3]).split(/\$\{(?:[^{}]|\{[^{}]*\})*\}/)) {
        const trimmed = piece.trim();
        // A piece with at least three words and 16 characters is wording; a field name or a value is not.
        if (trimmed.length >= 16 && trimmed.split(/\s+/).length >= 3) pieces.push(trimmed);
      }
    }
  }
  return pieces;
}

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "fixtures" ? [] : testFiles(path);
    return /\.(ts|mts|cts|mjs|js)$/.test(name) ? [path] : [];
  });
}

describe("rule wording lives in one place", () => {
  const sources = readdirSync(BUILTIN).map((name) => ({ name, text: readFileSync(join(BUILTIN, name), "utf8") }));
  const pieces = sources.flatMap(({ name, text }) => wordingPieces(text).map((piece) => ({ spec: name, piece })));

  it("reads the wording of every built-in spec's rules", () => {
    expect(new Set(pieces.map((p) => p.spec))).toEqual(new Set(sources.map((s) => s.name)));
    expect(pieces.map((p) => p.piece)).toEqual(
      expect.arrayContaining(["requires an object body", "confirm_password does not equal password; they must be identical"]),
    );
    expect(pieces.length).toBeGreaterThan(20);
  });

  it("finds a copy where there is one", () => {
    const copied = 'expect(errors).toEqual(["confirm_password does not equal password; they must be identical"]);';
    expect(pieces.some(({ piece }) => copied.includes(piece))).toBe(true);
  });

  it("no test file copies a built-in rule's message or description", () => {
    const self = resolve(import.meta.filename);
    const copies = testFiles(join(ROOT, "tests"))
      .filter((file) => file !== self)
      .flatMap((file) => {
        const text = readFileSync(file, "utf8");
        return pieces.filter(({ piece }) => text.includes(piece)).map(({ spec, piece }) => `${relative(ROOT, file)} copies ${spec}: ${JSON.stringify(piece)}`);
      });
    expect(copies).toEqual([]);
  });
});
