import { describe, it, expect } from "vitest";
import { bound, describeValue, lineAndColumn, quote } from "../../src/shared/text.js";

describe("bound", () => {
  it("leaves short text alone", () => {
    expect(bound("abc", 3)).toBe("abc");
    expect(bound("", 0)).toBe("");
  });

  it("cuts long text and says how much was left out", () => {
    expect(bound("abcdef", 3)).toBe("abc… [3 more characters]");
    expect(bound("x".repeat(1_000_000), 10)).toBe(`${"x".repeat(10)}… [999990 more characters]`);
  });

  it("never cuts a surrogate pair in half", () => {
    const text = "ab😀cd";
    expect(bound(text, 3)).toBe("ab… [4 more characters]");
    expect(bound(text, 4)).toBe("ab😀… [2 more characters]");
  });
});

describe("quote", () => {
  it("JSON-quotes text that fits", () => {
    expect(quote('say "hi"', 20)).toBe('"say \\"hi\\""');
  });

  it("counts escapes at their escaped length and marks a cut", () => {
    expect(quote("\u0000\u0000\u0000", 12)).toBe('"\\u0000\\u0000"…');
    expect(quote("abcdef", 3)).toBe('"abc"…');
  });
});

describe("describeValue", () => {
  it("renders scalars", () => {
    expect(describeValue(undefined)).toBe("undefined");
    expect(describeValue(null)).toBe("null");
    expect(describeValue(3)).toBe("3");
    expect(describeValue(0.5)).toBe("0.5");
    expect(describeValue(false)).toBe("false");
    expect(describeValue("x")).toBe('"x"');
  });

  it("bounds long strings and says how long they were", () => {
    expect(describeValue("a".repeat(61))).toBe(`"${"a".repeat(60)}"… (61 characters)`);
    expect(describeValue("a".repeat(60))).toBe(`"${"a".repeat(60)}"`);
    expect(describeValue("abcdef", 2)).toBe('"ab"… (6 characters)');
  });

  it("bounds strings whose characters need escaping", () => {
    const shown = describeValue("\n".repeat(1_000_000));
    expect(shown.length).toBeLessThan(100);
    expect(shown).toBe(`"${"\\n".repeat(30)}"… (1000000 characters)`);
  });

  it("keeps emoji whole", () => {
    expect(describeValue("😀😀😀", 4)).toBe('"😀😀"… (6 characters)');
  });

  it("summarises arrays and objects", () => {
    expect(describeValue([])).toBe("an array of 0 items");
    expect(describeValue([1])).toBe("an array of 1 item");
    expect(describeValue({})).toBe("an empty object");
    expect(describeValue({ a: 1, b: 2 })).toBe('an object with keys "a", "b"');
    expect(describeValue({ a: 1, b: 2, c: 3, d: 4, e: 5, f: 6 })).toBe('an object with keys "a", "b", "c", "d", "e", …');
    expect(describeValue({ ["k".repeat(1000)]: 1 }).length).toBeLessThan(60);
  });
});

describe("lineAndColumn", () => {
  it("is 1-based", () => {
    expect(lineAndColumn("abc", 0)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn("abc", 2)).toEqual({ line: 1, column: 3 });
  });

  it("counts lines by \\n", () => {
    expect(lineAndColumn("ab\ncd\nef", 3)).toEqual({ line: 2, column: 1 });
    expect(lineAndColumn("ab\ncd\nef", 7)).toEqual({ line: 3, column: 2 });
    expect(lineAndColumn("ab\r\ncd", 4)).toEqual({ line: 2, column: 1 });
  });

  it("clamps an offset past the end", () => {
    expect(lineAndColumn("ab", 100)).toEqual({ line: 1, column: 3 });
  });
});
