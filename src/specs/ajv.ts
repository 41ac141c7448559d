/**
 * The two ajv instances specs compile with. Built-in specs are trusted code and
 * use JavaScript's RegExp; specs supplied at run time are not, so their
 * `pattern`s run on RE2 (linear time) and a pattern RE2 cannot run is refused.
 */
import { Ajv, type Options } from "ajv";
import addFormatsModule from "ajv-formats";
import { RE2JS } from "re2js";

// ajv-formats is CommonJS; under NodeNext its default export is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

/**
 * ajv's regExp hook: compile with RE2 so no user pattern can backtrack for minutes.
 * ajv shares compiled patterns across schemas keyed by `toString()`, so each
 * pattern needs its own key (as a RegExp's "/source/flags" is).
 */
function re2Engine(pattern: string, flags: string): { test: (s: string) => boolean; toString: () => string } {
  const compiled = RE2JS.compile(pattern);
  const key = `re2:/${pattern}/${flags}`;
  return { test: (s: string) => compiled.matcher(s).find(), toString: () => key };
}
re2Engine.code = 'require("re2js").RE2JS';

const baseOptions: Options = {
  allErrors: true,
  $data: true,
  verbose: true, // errors carry the offending value and the keyword's schema, for exact messages
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allowUnionTypes: true,
  logger: false,
  addUsedSchema: false, // run-time specs may carry an $id; never register it globally
};

function createAjv(untrusted: boolean): Ajv {
  const ajv = new Ajv(untrusted ? { ...baseOptions, code: { regExp: re2Engine } } : baseOptions);
  addFormats(ajv);
  return ajv;
}

let trusted: Ajv | undefined;
let untrusted: Ajv | undefined;

/** The shared ajv instance for trusted (built-in, code-defined) or untrusted (run-time JSON) specs. */
export function ajvFor(kind: "trusted" | "untrusted"): Ajv {
  if (kind === "trusted") return (trusted ??= createAjv(false));
  return (untrusted ??= createAjv(true));
}
