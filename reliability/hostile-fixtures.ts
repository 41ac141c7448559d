/**
 * Hostile model answers for the validation graph, each with the outcome its
 * content deserves under the deployment-config spec.
 */
import { builtinSpecs } from "../src/specs/registry.js";

export interface HostileFixture {
  name: string;
  /** The model's answer (built lazily: some are megabytes). */
  answer: () => string;
  /** Whether the answer holds a valid deployment config. */
  valid: boolean;
}

const example = builtinSpecs.get("deployment-config")!.example as Record<string, any>;
const VALID = JSON.stringify(example);
const withField = (key: string, raw: string) => VALID.replace(/\}$/, `,${JSON.stringify(key)}:${raw}}`);
const replace = (path: string, raw: string) => {
  // Replace the literal value of a top-level or one-level-nested field in VALID's text.
  const [a, b] = path.split(".");
  const obj = JSON.parse(VALID);
  const marker = "__MARKER__";
  if (b) obj[a][b] = marker;
  else obj[a] = marker;
  return JSON.stringify(obj).replace(JSON.stringify(marker), raw);
};

export const hostileFixtures: HostileFixture[] = [
  { name: "valid bare JSON (control)", answer: () => VALID, valid: true },
  { name: "nesting 100,000 levels deep", answer: () => "[".repeat(100_000) + "]".repeat(100_000), valid: false },
  {
    name: "object nesting 100,000 levels deep inside a field",
    answer: () => withField("x", '{"a":'.repeat(100_000) + "1" + "}".repeat(100_000)),
    valid: false,
  },
  { name: "5 MB answer", answer: () => withField("padding", JSON.stringify("x".repeat(5_000_000))), valid: false },
  // A field named __proto__ is refused: LangGraph's checkpoint would not give it back as written (src/json/kept.ts).
  { name: "__proto__ key at the top level", answer: () => VALID.replace(/^\{/, '{"__proto__":{"polluted":true},'), valid: false },
  { name: "__proto__ key nested", answer: () => replace("resources.cpu_limit", '0.5,"__proto__":{"polluted":true}'), valid: false },
  { name: "a checkpoint marker's shape", answer: () => withField("labels", '{"lc":2,"type":"undefined"}'), valid: false },
  { name: "constructor key", answer: () => withField("constructor", '{"prototype":{"polluted":true}}'), valid: true },
  { name: "prototype key", answer: () => withField("prototype", '{"polluted":true}'), valid: true },
  { name: "__proto__ replacing a required object", answer: () => replace("resources", '{"__proto__":{"cpu_limit":1,"memory_limit_mb":512}}'), valid: false },
  { name: "NaN value", answer: () => replace("replicas", "NaN"), valid: false },
  { name: "Infinity value", answer: () => replace("resources.cpu_limit", "Infinity"), valid: false },
  { name: "-Infinity value", answer: () => replace("resources.cpu_limit", "-Infinity"), valid: false },
  { name: "1e400 (overflows to Infinity)", answer: () => replace("resources.cpu_limit", "1e400"), valid: false },
  { name: "-0 as replicas", answer: () => replace("replicas", "-0"), valid: false },
  { name: "-0 in an unconstrained extra field", answer: () => withField("offset", "-0"), valid: true },
  { name: "duplicate keys", answer: () => VALID.replace(/^\{/, '{"replicas":50,'), valid: false },
  { name: "duplicate keys, nested", answer: () => replace("resources.cpu_limit", '0.5,"cpu_limit":0.6'), valid: false },
  { name: "byte-order mark", answer: () => "\uFEFF" + VALID, valid: true },
  // Syntax slips the model's reader repairs without another call (src/json/repair.ts); the repaired value is judged whole.
  { name: "trailing comma", answer: () => VALID.replace(/\}$/, ",}"), valid: true },
  { name: "line comment", answer: () => VALID.replace(/^\{/, "{// the config\n"), valid: true },
  { name: "block comment", answer: () => VALID.replace(/^\{/, "{/* the config */"), valid: true },
  { name: "a repaired slip around an invalid value", answer: () => replace("replicas", "-1").replace(/\}$/, ",}"), valid: false },
  { name: "a truncated answer with a trailing comma (never completed)", answer: () => VALID.slice(0, VALID.lastIndexOf(",") + 1), valid: false },
  { name: "two JSON objects in a row", answer: () => VALID + VALID, valid: false },
  { name: "two JSON objects in prose", answer: () => `Option A: ${VALID}\nOption B: ${VALID}`, valid: false },
  { name: "JSON inside prose", answer: () => `Here is the config you asked for:\n${VALID}\nLet me know if you need changes.`, valid: true },
  { name: "```json fence", answer: () => "```json\n" + VALID + "\n```", valid: true },
  { name: "bare ``` fence", answer: () => "```\n" + VALID + "\n```", valid: true },
  { name: "~~~ fence", answer: () => "~~~json\n" + VALID + "\n~~~", valid: true },
  { name: "four-backtick fence", answer: () => "````json\n" + VALID + "\n````", valid: true },
  { name: "one-line fence", answer: () => "```" + VALID + "```", valid: true },
  { name: "fence inside prose", answer: () => "Sure!\n\n```json\n" + VALID + "\n```\n\nThe timeout is below the interval.", valid: true },
  { name: "two fences", answer: () => "```json\n" + VALID + "\n```\nor\n```json\n" + VALID + "\n```", valid: false },
  { name: "truncated JSON", answer: () => VALID.slice(0, VALID.length / 2), valid: false },
  { name: "truncated JSON in a fence", answer: () => "```json\n" + VALID.slice(0, 40), valid: false },
  { name: "truncated JSON after prose", answer: () => "Here you go: " + VALID.slice(0, 50), valid: false },
  { name: "empty answer (whitespace)", answer: () => " ", valid: false },
  { name: "whitespace-only answer", answer: () => " \n\t \n ", valid: false },
  { name: "invalid surrogate pair in a string", answer: () => replace("service_name", '"pay\\ud800ments"'), valid: false },
  { name: "lone surrogate in an extra field", answer: () => withField("note", '"\\udfff"'), valid: true },
  { name: "raw lone surrogate character", answer: () => withField("note", `"\ud800"`), valid: true },
  { name: "1 MB string in one field", answer: () => replace("health_check.path", JSON.stringify("/" + "a".repeat(1_000_000))), valid: false },
  { name: "1 MB string in service_name", answer: () => replace("service_name", JSON.stringify("a".repeat(999_000))), valid: true },
  { name: "1,000,000-element array", answer: () => "[" + "1,".repeat(999_999) + "1]", valid: false },
  { name: "400,000-element array in a field", answer: () => withField("items", "[" + "0,".repeat(399_999) + "0]"), valid: true },
  {
    name: "answer repeats the prompt",
    answer: () =>
      `You write JSON objects of this kind: ...\nExample of a valid object:\n${VALID}\n\nRequest:\nA deployment config\n${JSON.stringify({ type: "object" })}`,
    valid: false,
  },
  { name: "refusal", answer: () => "I'm sorry, but I can't help with that request.", valid: false },
  { name: "JSON string instead of object", answer: () => JSON.stringify(VALID), valid: false },
  { name: "top-level array", answer: () => `[${VALID}]`, valid: false },
  { name: "null", answer: () => "null", valid: false },
  { name: "control characters in a string", answer: () => replace("service_name", '"pay\u0000ments"'), valid: false },
  { name: "escaped control characters", answer: () => replace("service_name", '"pay\\u0000ments"'), valid: false },
  { name: "huge number of fields", answer: () => VALID.replace(/\}$/, Array.from({ length: 20_000 }, (_, i) => `,"f${i}":${i}`).join("") + "}"), valid: true },
  {
    name: "many errors at once",
    answer: () =>
      JSON.stringify({
        service_name: "Bad Name",
        replicas: 99,
        resources: { cpu_limit: 99, memory_limit_mb: 1 },
        health_check: { path: "x", timeout_seconds: 0, interval_seconds: 1 },
      }),
    valid: false,
  },
  { name: "deeply nested but within limits", answer: () => withField("deep", '{"a":'.repeat(60) + "1" + "}".repeat(60)), valid: true },
  { name: "unicode escapes and emoji", answer: () => withField("note", JSON.stringify("déploiement 🚀")), valid: true },
];
