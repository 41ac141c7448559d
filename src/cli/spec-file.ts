/**
 * `--spec FILE` for the command line: read a JSON spec file, or refuse it with a message that says
 * where it is not JSON (line and column) without ever quoting the file: a mistyped `--spec .env`
 * must not print a key.
 */
import { readFileSync, statSync } from "node:fs";
import { ConfigurationError } from "../errors.js";
import { lineAndColumn } from "../shared/text.js";

/** Larger files are not specs; refusing them early keeps `--spec /dev/zero` from reading forever. */
const MAX_SPEC_FILE_BYTES = 1_048_576;

export function readSpecFile(path: string, builtinNames: string[]): unknown {
  const shown = JSON.stringify(path);
  let size: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new ConfigurationError(`--spec ${shown} is not a file.`);
    size = stat.size;
  } catch (error) {
    if (error instanceof ConfigurationError) throw error;
    throw new ConfigurationError(`--spec ${shown} is neither a built-in spec (${builtinNames.join(", ")}) nor a readable file.`);
  }
  if (size > MAX_SPEC_FILE_BYTES) {
    throw new ConfigurationError(`--spec ${shown} is ${size} bytes; a spec file may have at most ${MAX_SPEC_FILE_BYTES} bytes.`);
  }
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    throw new ConfigurationError(`--spec ${shown} is neither a built-in spec (${builtinNames.join(", ")}) nor a readable file.`);
  }
  const problem = findJsonError(text);
  if (problem) {
    const { line, column } = lineAndColumn(text, problem.offset);
    throw new ConfigurationError(`--spec ${shown} is not a valid JSON spec: ${problem.expected} at line ${line}, column ${column}.`);
  }
  return JSON.parse(text);
}

/**
 * Where a text stops being JSON, and what was expected there; undefined when it is JSON.
 * Its own scanner, not the answer readers' (src/json/parse.ts): their messages quote the text around the
 * error, which here could be a secret (`--spec .env`), and V8's JSON.parse messages do too.
 */
function findJsonError(text: string): { offset: number; expected: string } | undefined {
  let i = 0;
  const fail = (expected: string): never => {
    throw { offset: i, expected };
  };
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail("a JSON value expected");
  };
  const string = () => {
    i++; // opening quote
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return;
      }
      if (c < 32) fail("a control character inside a string");
      if (c === 92) {
        i++;
        const e = text[i];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail("a \\u escape with four hex digits expected");
          i += 5;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
        else fail("an invalid escape in a string");
      } else i++;
    }
    fail("an unterminated string");
  };
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!match || match[0] === "" || match[0] === "-") fail("a JSON value expected");
    i += match![0].length;
  };
  // Iterative over containers, so a deeply nested file cannot overflow the stack.
  const stack: Array<"object" | "array"> = [];
  const value = () => {
    ws();
    const c = text[i];
    if (c === "{" || c === "[") {
      stack.push(c === "{" ? "object" : "array");
      i++;
      return true; // container opened
    }
    if (c === '"') string();
    else if (c === "t") literal("true");
    else if (c === "f") literal("false");
    else if (c === "n") literal("null");
    else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) number();
    else fail(i >= text.length ? "unexpected end of file" : "a JSON value expected");
    return false;
  };
  const key = () => {
    ws();
    if (text[i] !== '"') fail("a property name in double quotes expected");
    string();
    ws();
    if (text[i] !== ":") fail("':' expected");
    i++;
  };
  try {
    let opened = value();
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      ws();
      if (opened) {
        opened = false;
        if (text[i] === (top === "object" ? "}" : "]")) {
          i++;
          stack.pop();
          continue;
        }
        if (top === "object") key();
        opened = value();
        continue;
      }
      if (text[i] === ",") {
        i++;
        if (top === "object") key();
        opened = value();
        continue;
      }
      if (text[i] === (top === "object" ? "}" : "]")) {
        i++;
        stack.pop();
        continue;
      }
      fail(i >= text.length ? "unexpected end of file" : top === "object" ? "',' or '}' expected" : "',' or ']' expected");
    }
    ws();
    if (i < text.length) fail("the end of the JSON document expected");
    return undefined;
  } catch (error) {
    if (error && typeof error === "object" && "offset" in error) return error as { offset: number; expected: string };
    throw error;
  }
}
