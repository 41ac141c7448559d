/**
 * Provider facts live in one room: each provider is named in at most 3 source files (its row in
 * src/providers/, the table that lists the rows, and at most one more), and spelled one way. Adding a
 * provider is then a file in src/providers/ and a line in the table, plus its tests and docs.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { MODEL_PROVIDERS } from "../../src/providers/index.js";

const ROOT = resolve(import.meta.dirname, "../..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : /\.(ts|mts|cts)$/.test(name) ? [path] : [];
  });
}

/**
 * Words that are not the provider: "OpenAI-compatible" names the Chat Completions wire format many servers speak
 * (a bare model name means a model on such a server), and LangChain's `convertToOpenAITool` names that format's
 * tool shape; "GenAI" names OpenTelemetry's semantic conventions for generative AI.
 */
const NOT_THE_PROVIDER = [/OpenAI-compatible/gi, /convertToOpenAITool/g, /\bGenAI\b/g];

/** Each provider's names: its key in the table, and the other ways it has been written (its maker's name, its client's name). */
const SPELLINGS: Record<string, RegExp> = {
  openai: /openai/i,
  anthropic: /anthropic|claude/i,
  ollama: /ollama/i,
  google: /google|gemini/i,
  "google-genai": /google|gemini|genai/i,
};

const files = sourceFiles(join(ROOT, "src")).map((path) => ({
  file: relative(ROOT, path),
  text: NOT_THE_PROVIDER.reduce((text, word) => text.replace(word, ""), readFileSync(path, "utf8")),
}));

describe("provider names in src/", () => {
  it("reads every source file, and each provider of the table has its spellings here", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(Object.keys(SPELLINGS).sort()).toEqual(Object.keys(MODEL_PROVIDERS).sort());
  });

  it.each(Object.entries(SPELLINGS))("%s is named in at most 3 source files, all in src/providers/", (_provider, spelling) => {
    const naming = files.filter(({ text }) => spelling.test(text)).map(({ file }) => file);
    expect(naming.length).toBeGreaterThan(0);
    expect(naming.length, naming.join(", ")).toBeLessThanOrEqual(3);
    expect(naming.filter((file) => !file.startsWith("src/providers/"))).toEqual([]);
  });

  it("the counting sees a provider named outside the room", () => {
    const stray = "// a comment about Anthropic's stop_reason";
    expect(SPELLINGS.anthropic.test(stray)).toBe(true);
    expect(SPELLINGS.openai.test(NOT_THE_PROVIDER.reduce((text, word) => text.replace(word, ""), "an OpenAI-compatible server"))).toBe(false);
  });
});
