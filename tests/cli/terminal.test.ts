/** What the command line writes to a terminal: other people's control characters inert and visible; lines it reads. */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { inert, lineReader } from "../../src/cli/terminal.js";

/** Every character a terminal would act on (or that reorders a line) rather than show, newline and tab aside. */
const ACTIVE_CODES = [
  ...range(0x00, 0x08),
  ...range(0x0b, 0x1f),
  ...range(0x7f, 0x9f),
  0x061c,
  0x200e,
  0x200f,
  0x2028,
  0x2029,
  ...range(0x202a, 0x202e),
  ...range(0x2066, 0x2069),
];
const ACTIVE = new RegExp(`[${ACTIVE_CODES.map((c) => `\\u${c.toString(16).padStart(4, "0")}`).join("")}]`);

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

describe("inert", () => {
  it("shows escape sequences, carriage returns, BEL, DEL and C1 controls as \\xHH escapes", () => {
    const spoof = "\x1b[2J\x1b[H\x1b]0;title\x07\x1b[31mThe value is valid\x1b[0m\rok\x08\x7f\x9b2J\x9d0;t\x9c";
    expect(inert(spoof)).toBe("\\x1b[2J\\x1b[H\\x1b]0;title\\x07\\x1b[31mThe value is valid\\x1b[0m\\x0dok\\x08\\x7f\\x9b2J\\x9d0;t\\x9c");
  });

  it("shows bidi controls and the Unicode line separators as \\uHHHH escapes", () => {
    const text = String.fromCodePoint(...range(0x202a, 0x202e), ...range(0x2066, 0x2069), 0x200e, 0x200f, 0x061c, 0x2028, 0x2029);
    expect(inert(text)).toBe("\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c\\u2028\\u2029");
    expect(inert("evil\u202etxt.exe")).toBe("evil\\u202etxt.exe");
  });

  it("leaves every other character as it is: newlines, tabs, accents, CJK, Arabic, emoji", () => {
    const plain = 'line 1\n\tline 2 {"a": "é 中文 مرحبا 😀 \\u001b"}\n';
    expect(inert(plain)).toBe(plain);
    expect(inert(plain, "json")).toBe(plain);
  });

  it("leaves no active character anywhere in the Basic Multilingual Plane, and is idempotent", () => {
    const all = String.fromCharCode(...range(0, 0xd7ff));
    const once = inert(all);
    expect(once).not.toMatch(ACTIVE);
    expect(inert(once)).toBe(once);
    expect(inert(all, "json")).not.toMatch(ACTIVE);
  });

  it('"json": the output of JSON.stringify stays the same JSON value, with no active character left', () => {
    const value = { text: String.fromCharCode(...range(0, 0xa0), 0x202e, 0x2066, 0x2028), [`key\x9b\u202e`]: ["\x1b[2J", 1] };
    for (const text of [JSON.stringify(value), JSON.stringify(value, null, 2)]) {
      const shown = inert(text, "json");
      expect(shown).not.toMatch(ACTIVE);
      expect(shown).not.toContain("\\x");
      expect(JSON.parse(shown)).toEqual(value);
    }
  });
});

describe("lineReader", () => {
  const setup = () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let written = "";
    output.on("data", (chunk) => (written += chunk));
    return { input, output, reader: lineReader(input, output), written: () => written };
  };

  it("reads lines in order, also those typed ahead of their prompt, and writes each prompt inert", async () => {
    const { input, reader, written } = setup();
    input.write("first\nsecond\n");
    await new Promise((resolve) => setImmediate(resolve));
    expect(await reader.read("one\x1b[2J: ")).toBe("first");
    expect(await reader.read("two: ")).toBe("second");
    const third = reader.read("three: ");
    input.write("third\n");
    expect(await third).toBe("third");
    expect(written()).toBe("one\\x1b[2J: two: three: ");
    reader.close();
  });

  it("gives null at the end of input", async () => {
    const { input, reader } = setup();
    const pending = reader.read("? ");
    input.end();
    expect(await pending).toBeNull();
    expect(await reader.read("? ")).toBeNull();
  });

  it("close() stops reading the input, so an open terminal cannot keep the process alive", async () => {
    const { input, reader } = setup();
    const pending = reader.read("? ");
    reader.close();
    expect(await pending).toBeNull();
    expect(input.isPaused()).toBe(true);
    expect(await reader.read("? ")).toBeNull();
  });

  it("a signal that aborts while a read waits rejects it with the signal's reason (Ctrl-C at the prompt)", async () => {
    const { input, reader } = setup();
    const interrupt = new AbortController();
    const pending = reader.read("? ", interrupt.signal);
    interrupt.abort(new Error("interrupted"));
    await expect(pending).rejects.toThrow("interrupted");
    await expect(reader.read("? ", interrupt.signal)).rejects.toThrow("interrupted");
    // A line typed after the abort is not lost to the abandoned read.
    input.write("later\n");
    expect(await reader.read("? ")).toBe("later");
    reader.close();
  });
});
