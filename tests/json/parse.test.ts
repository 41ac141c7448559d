import { describe, it, expect } from "vitest";
import { DEFAULT_JSON_LIMITS, extractJson, type ExtractResult } from "../../src/json/parse.js";

/** The value read from `answer`, failing the test with the error when there is none. */
function read(answer: unknown, source?: "bare" | "fence" | "prose"): unknown {
  const result = extractJson(answer);
  if (!result.ok) throw new Error(`expected JSON, got error: ${result.error}`);
  if (source) expect(result.source).toBe(source);
  return result.value;
}

/** The error for `answer`, failing the test when a value was read; every error is bounded. */
/** The reader's messages for slips it can repair, as the model gets them with repairs turned off. */
const NO_REPAIR = { repair: false };

function error(answer: unknown, limits?: Parameters<typeof extractJson>[1], options?: Parameters<typeof extractJson>[2]): string {
  const result: ExtractResult = extractJson(answer, limits, options);
  if (result.ok) throw new Error(`expected an error, got ${JSON.stringify(result.value)} from ${result.source}`);
  expect(result.error.length).toBeLessThan(500);
  expect(result.error.length).toBeGreaterThan(10);
  return result.error;
}

describe("bare JSON", () => {
  it("reads a bare object", () => {
    expect(read('{"service_name": "api", "replicas": 3}', "bare")).toEqual({ service_name: "api", replicas: 3 });
  });

  it("reads a bare array", () => {
    expect(read('[1, 2, {"a": null}]', "bare")).toEqual([1, 2, { a: null }]);
  });

  it("reads bare scalars", () => {
    expect(read("42", "bare")).toBe(42);
    expect(read('"text"', "bare")).toBe("text");
    expect(read("true", "bare")).toBe(true);
    expect(read("null", "bare")).toBeNull();
  });

  it("ignores surrounding whitespace and a byte-order mark", () => {
    expect(read('\uFEFF{"a": 1}', "bare")).toEqual({ a: 1 });
    expect(read('\uFEFF  \n {"a": 1}\n\n', "bare")).toEqual({ a: 1 });
    expect(read('\r\n{"a": 1}\r\n', "bare")).toEqual({ a: 1 });
  });

  it("reads pretty-printed JSON with CRLF line ends", () => {
    expect(read('{\r\n  "a": [1,\r\n 2]\r\n}', "bare")).toEqual({ a: [1, 2] });
  });

  it("keeps nesting up to the depth limit", () => {
    const depth = DEFAULT_JSON_LIMITS.maxDepth;
    const nested = "[".repeat(depth) + "]".repeat(depth);
    expect(extractJson(nested).ok).toBe(true);
    expect(error("[".repeat(depth + 1) + "]".repeat(depth + 1))).toContain(`deeper than ${depth} levels`);
  });
});

describe("fenced JSON", () => {
  it("reads a ```json fence", () => {
    expect(read('Here is the config:\n```json\n{"a": 1}\n```\nLet me know.', "fence")).toEqual({ a: 1 });
  });

  it("reads a bare ``` fence", () => {
    expect(read('```\n{"a": [1, 2]}\n```', "fence")).toEqual({ a: [1, 2] });
  });

  it("reads a ~~~ fence", () => {
    expect(read('~~~json\n{"a": true}\n~~~', "fence")).toEqual({ a: true });
    expect(read('~~~\n{"a": true}\n~~~', "fence")).toEqual({ a: true });
  });

  it("reads a one-line fence, with or without a language tag", () => {
    expect(read('```{"a": 1}```', "fence")).toEqual({ a: 1 });
    expect(read('```json {"a": 1}```', "fence")).toEqual({ a: 1 });
    expect(read('```json{"a": 1}```', "fence")).toEqual({ a: 1 });
    expect(read("```42```", "fence")).toBe(42);
  });

  it("reads a longer fence, an indented fence, and a fence with a JSON-ish language tag", () => {
    expect(read('````json\n{"a": "```"}\n````', "fence")).toEqual({ a: "```" });
    expect(read('Result:\n  ```json\n  {"a": 1}\n  ```', "fence")).toEqual({ a: 1 });
    expect(read('```jsonc\n{"a": 1}\n```', "fence")).toEqual({ a: 1 });
  });

  it("reads the one JSON fence among fences of other languages", () => {
    expect(read('Run:\n```bash\nnpm start\n```\nConfig:\n```json\n{"a": 1}\n```', "fence")).toEqual({ a: 1 });
  });

  it("refuses several JSON fences, saying how many", () => {
    const answer = '```json\n{"a": 1}\n```\nor\n```json\n{"a": 2}\n```\nor\n```json\n{"a": 3}\n```';
    expect(error(answer)).toBe("The answer has 3 separate JSON blocks; reply with exactly one JSON object.");
    expect(error('```json\n{"a": 1}\n```\n```\n[2]\n```')).toContain("2 separate JSON blocks");
  });

  it("says where a broken fence is, with line and column in the answer", () => {
    const answer = 'Sure:\n```json\n{\n  "a": 1,\n  "b": [1,]\n}\n```\nDone.';
    expect(error(answer, {}, NO_REPAIR)).toBe(
      'The ```json block starting at line 2 is not valid JSON: Unexpected token \']\' at line 5, column 11 (near " \\"a\\": 1, \\"b\\": [1,] }"). JSON does not allow a trailing comma.',
    );
  });

  it("says when a fence is empty", () => {
    expect(error("```json\n```")).toBe("The ```json block starting at line 1 is not valid JSON: it is empty.");
  });
});

describe("JSON in prose", () => {
  it("reads one object after text", () => {
    expect(read('Here is the configuration you asked for: {"a": 1, "b": {"c": [1, 2]}}', "prose")).toEqual({ a: 1, b: { c: [1, 2] } });
  });

  it("reads one object before text", () => {
    expect(read('{"a": 1}\n\nThis sets a to 1; tell me if you need more.', "prose")).toEqual({ a: 1 });
  });

  it("reads one object between paragraphs", () => {
    expect(read('Sure.\n\n{"a": "x}"}\n\nThe brace in the string is fine.', "prose")).toEqual({ a: "x}" });
  });

  it("ignores brace text in the prose that is not JSON", () => {
    expect(read('Use {name} placeholders. Result: {"a": 1}', "prose")).toEqual({ a: 1 });
  });

  it("refuses two objects in prose, saying how many", () => {
    expect(error('First {"a": 1} and then {"b": 2}.')).toBe("The answer has 2 separate JSON objects; reply with exactly one JSON object.");
    expect(error('{"a": 1}\n{"b": 2}')).toBe("The answer has 2 separate JSON objects; reply with exactly one JSON object.");
  });

  it("refuses an answer with no JSON, quoting its start", () => {
    expect(error("I cannot help with that.")).toBe(
      'The answer contains no JSON object; reply with one JSON object and nothing else. The answer began: "I cannot help with that."',
    );
  });

  it("does not take an array in prose for the object", () => {
    expect(error("The replicas are [1, 2, 3].")).toContain("contains no JSON object");
  });

  it("reports a broken object in prose with its position in the answer", () => {
    expect(error('Here:\n  {"a": NaN}\nthanks')).toBe(
      'The JSON object starting at line 2, column 3 is not valid JSON: Unexpected token \'N\' at line 2, column 9 (near "{\\"a\\": NaN}"). JSON has no NaN, Infinity or undefined; use a number or null.',
    );
  });

  it("reports a wrong closing bracket in prose as an error, not as truncation", () => {
    const message = error('Here: {"a": [1, 2}, "b": 3');
    expect(message).toContain("is not valid JSON: Expected ',' or ']' after array element at line 1, column 18");
    expect(message).not.toContain("truncated");
  });
});

describe("truncated JSON", () => {
  it("says a bare object is truncated", () => {
    expect(error('{"service_name": "api", "replicas": 3')).toBe("The JSON is truncated: it ends after 37 characters before every object and array is closed.");
    expect(error('{"a": {"b": [1, 2')).toMatch(/^The JSON is truncated/);
    expect(error('{"a": "unterminated')).toMatch(/^The JSON is truncated/);
    expect(error('{"a": tru')).toMatch(/^The JSON is truncated/);
    expect(error('{"a": -')).toMatch(/^The JSON is truncated/);
    expect(error("[1, 2,")).toMatch(/^The JSON is truncated/);
  });

  it("says a fenced object is truncated, in a closed and an unclosed fence", () => {
    expect(error('```json\n{"a": 1,\n "b": 2\n```')).toBe(
      "The ```json block starting at line 1 is not valid JSON: the JSON is truncated: it ends after 16 characters before every object and array is closed.",
    );
    expect(error('Sure:\n```json\n{"a": 1,\n "b": [2')).toMatch(/^The unclosed ```json block starting at line 2 is not valid JSON: the JSON is truncated/);
  });

  it("says an object in prose is truncated", () => {
    expect(error('Here it is: {"a": 1, "b": {"c": 2}')).toBe(
      "The JSON is truncated: the object starting at line 1, column 13 is never closed (the answer ends after 34 characters).",
    );
  });
});

describe("empty and non-text answers", () => {
  it.each(["", " ", "\n\t  \r\n", "\uFEFF", "\uFEFF  "])("refuses the empty answer %j", (answer) => {
    expect(error(answer)).toBe("The answer was empty; reply with one JSON object and nothing else.");
  });

  it.each<[unknown, string]>([
    [null, "null"],
    [undefined, "undefined"],
    [42, "number"],
    [{ a: 1 }, "object"],
    [["{}"], "object"],
    [true, "boolean"],
  ])("refuses %j, which is not text", (answer, kind) => {
    expect(error(answer)).toBe(`The answer was ${kind}, not text; reply with one JSON object.`);
  });
});

describe("JSON syntax errors give a line and column", () => {
  it("NaN", () => {
    expect(error('{"replicas": NaN}')).toBe(
      'The answer is not valid JSON: Unexpected token \'N\' at line 1, column 14 (near "{\\"replicas\\": NaN}"). JSON has no NaN, Infinity or undefined; use a number or null.',
    );
  });

  it("a trailing comma in an object", () => {
    expect(error('{"a": 1,\n "b": 2,\n}', {}, NO_REPAIR)).toBe(
      'The answer is not valid JSON: Expected double-quoted property name at line 3, column 1 (near "{\\"a\\": 1, \\"b\\": 2, }"). JSON does not allow a trailing comma.',
    );
  });

  it("a trailing comma in an array after an earlier, valid array", () => {
    expect(error('{"a":[1],"b":[2,]}', {}, NO_REPAIR)).toMatch(/Unexpected token '\]' at line 1, column 17 /);
    const long = `{"first": [1, 2, 3], "second_field_with_a_long_name": [4, 5,], "third": 6}`;
    expect(error(long, {}, NO_REPAIR)).toMatch(new RegExp(`Unexpected token '\\]' at line 1, column ${long.indexOf(",]") + 2} `));
  });

  it("a line comment", () => {
    expect(error('{\n  "a": 1, // the answer\n  "b": 2\n}', {}, NO_REPAIR)).toMatch(
      /^The answer is not valid JSON: .* at line 2, column 11 .* JSON does not allow comments\.$/,
    );
  });

  it("a block comment", () => {
    expect(error('{"a": /* one */ 1}', {}, NO_REPAIR)).toMatch(
      /^The answer is not valid JSON: Unexpected token '\/' at line 1, column 7 .* JSON does not allow comments\.$/,
    );
  });

  it("single quotes and unquoted keys", () => {
    expect(error("{'a': 1}", {}, NO_REPAIR)).toMatch(/at line 1, column 2 .* JSON strings and keys need double quotes\.$/);
    expect(error("{a: 1}", {}, NO_REPAIR)).toMatch(/at line 1, column 2 /);
  });

  it("Infinity, -Infinity and undefined", () => {
    expect(error('{"a": Infinity}')).toMatch(/at line 1, column 7 .* use a number or null\.$/);
    expect(error('{"a": -Infinity}')).toMatch(/at line 1, column 8 .* use a number or null\.$/);
    expect(error('{"a": undefined}')).toMatch(/at line 1, column 7 .* use a number or null\.$/);
  });

  it("a missing comma between fields", () => {
    expect(error('{"a": 1\n "b": 2}')).toBe(
      'The answer is not valid JSON: Expected \',\' or \'}\' after property value at line 2, column 2 (near "{\\"a\\": 1 \\"b\\": 2}").',
    );
  });

  it("text after the JSON", () => {
    expect(error("[1, 2] and more")).toBe(
      'The answer is not valid JSON: Unexpected non-whitespace character after JSON at line 1, column 8 (near "[1, 2] and more").',
    );
  });

  it("a raw control character in a string, shown escaped", () => {
    const message = error('{"a": "x\u0001y"}');
    expect(message).toContain("Bad control character in string literal at line 1, column 9");
    expect(message).toContain("\\u0001");
    expect(message).not.toContain("\u0001");
  });
});

describe("prototype safety", () => {
  it("refuses a field named __proto__ (a checkpoint would not give it back) and pollutes nothing", () => {
    for (const answer of [
      '{"__proto__": {"polluted": true}, "a": 1}',
      '```json\n{"__proto__": {"polluted": true}}\n```',
      'Here: {"__proto__": {"polluted": true}}',
      '{"a": [{"__proto__": 1}]}',
    ]) {
      const result = extractJson(answer);
      expect(result.ok, answer).toBe(false);
      expect((result as { error: string }).error).toMatch(/^The JSON cannot be kept as written: (the value|a\[0\]) has a field named "__proto__"/);
    }
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect((Object.prototype as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it("treats constructor and prototype keys as plain data", () => {
    const value = read('{"constructor": {"prototype": {"polluted": true}}, "prototype": 1}') as Record<string, any>;
    expect(Object.keys(value)).toEqual(["constructor", "prototype"]);
    expect(value.constructor).toEqual({ prototype: { polluted: true } });
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(typeof {}.constructor).toBe("function");
  });
});

describe("hostile sizes", () => {
  it("refuses nesting 100,000 levels deep cleanly, bare, fenced and in prose", () => {
    const deepArray = "[".repeat(100_000) + "]".repeat(100_000);
    const deepObject = '{"a":'.repeat(100_000) + "1" + "}".repeat(100_000);
    for (const answer of [
      deepArray,
      deepObject,
      `\`\`\`json\n${deepArray}\n\`\`\``,
      `Here: ${deepObject}`,
      "[".repeat(100_000),
      `Here: ${'{"a":'.repeat(100_000)}`,
    ]) {
      const result = extractJson(answer);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error).toBe("The JSON nests deeper than 64 levels; the expected object is shallow.");
    }
  });

  it("refuses a 5 MB answer by its size", () => {
    const answer = `{"a": "${"x".repeat(5_000_000)}"}`;
    expect(error(answer)).toBe(`The answer is ${answer.length} characters long, over the limit of 1000000; reply with the JSON object only.`);
  });

  it("accepts an answer at the size limit and refuses one just over it", () => {
    const body = (n: number) => `{"a": "${"x".repeat(n - 9)}"}`;
    expect(body(1_000_000)).toHaveLength(1_000_000);
    expect(extractJson(body(1_000_000)).ok).toBe(true);
    expect(error(body(1_000_001))).toContain("over the limit of 1000000");
  });

  it("honours custom limits", () => {
    expect(error('{"a": 1}', { maxChars: 5 })).toContain("over the limit of 5");
    expect(error('{"a": {"b": 1}}', { maxDepth: 1 })).toContain("deeper than 1 levels");
    expect(extractJson('{"a": {"b": 1}}', { maxDepth: 2 }).ok).toBe(true);
  });

  it("keeps every error under 500 characters for huge inputs", () => {
    const big = 900_000;
    const answers = [
      "x".repeat(big),
      "\u0001".repeat(big),
      `{"a": ${"1".repeat(big)}`,
      `{"a": "${"\u0001".repeat(big)}"}`,
      `{"a": [${"1,".repeat(big / 2)}] x}`,
      `Prose ${"word ".repeat(big / 5)} {"a": NaN}`,
      `\`\`\`json\n{"${"k".repeat(big)}": NaN}\n\`\`\``,
      `{"a": 1} {"b": 2} ${"{}".repeat(big / 2)}`,
      `${"{".repeat(60)}${"x".repeat(big)}`,
    ];
    for (const answer of answers) error(answer);
  });

  // How fast is a benchmark's question (bench/), not a test's: a busy machine would make a time limit fail at random.
  it("reads a large valid answer", () => {
    const value = { items: Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `item-${i}` })) };
    const answer = `Here you go:\n\`\`\`json\n${JSON.stringify(value)}\n\`\`\``;
    expect(read(answer, "fence")).toEqual(value);
  });
});
