/**
 * Readable refusals at the graph's front door, carried by the graph's own
 * schemas. LangGraph parses every new input against the input schema and
 * every run's context against the context schema before any node runs; a
 * zod refinement that throws stops that parse with the package's own
 * ConfigurationError instead of a raw ZodError dump. Because the checks live
 * in the schemas the StateGraph is built with, they hold on every path: the
 * compiled graph, the uncompiled builder compiled by a user, `withConfig`, and
 * the LangGraph server.
 */
import { z } from "zod";
import { ConfigurationError } from "../errors.js";

/**
 * Keys LangGraph and the LangGraph server put in `configurable`. When a run
 * passes no `context`, LangGraph checks `configurable` against the context
 * schema instead; these keys are then expected and not a caller's typo.
 */
function looksLikeConfigurable(value: Record<string, unknown>): boolean {
  return Object.keys(value).some(
    (key) =>
      key.startsWith("__") ||
      key.startsWith("langgraph_") ||
      key.startsWith("checkpoint_") ||
      key === "thread_id" ||
      key === "run_id" ||
      key === "assistant_id" ||
      key === "graph_id",
  );
}

/** Levenshtein distance, for "did you mean" suggestions on short keys. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length];
}

/** The known key closest to `key`, when it is close enough to be a likely typo. */
function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(key, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined;
}

/** Refuse keys a settings object does not know, naming the closest valid one. */
function refuseUnknownKeys(value: Record<string, unknown>, known: readonly string[], what: string): void {
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  if (unknown.length === 0) return;
  throw new ConfigurationError(
    unknown.map((key) => {
      const near = closestKey(key, known);
      return `${what} has no setting ${JSON.stringify(key)}${near ? `; did you mean ${JSON.stringify(near)}?` : ""} (settings: ${known.join(", ")})`;
    }),
  );
}

/**
 * The context schema a graph is built with: `schema` for Studio's form and
 * the JSON Schema the server publishes, plus a refinement that runs `check`
 * on what the run was given and refuses unknown keys by name. When a run has
 * no `context`, LangGraph checks `configurable` instead, which also carries
 * LangGraph's and the server's own keys (and `extraKeys`, settings a graph
 * reads from `configurable` only): there only near-misses of a setting's name
 * are refused, as likely typos. `check` throws ConfigurationError.
 */
export function checkedContext<T extends z.ZodObject>(schema: T, check: (given: Record<string, unknown>) => void, extraKeys: readonly string[] = []): T {
  const known = Object.keys(schema.shape);
  // Loose, so the refinement sees unknown keys (to refuse them by name); the
  // published JSON Schema still says that no other keys are allowed.
  const loose = schema.loose().meta({ ...(schema.meta() ?? {}), additionalProperties: false });
  return loose.refine(
    (value: unknown) => {
      const given = value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
      const others = Object.keys(given).filter((key) => !known.includes(key) && !extraKeys.includes(key));
      const refused = looksLikeConfigurable(given) ? others.filter((key) => closestKey(key, known) !== undefined) : others;
      if (refused.length > 0) refuseUnknownKeys(Object.fromEntries(refused.map((key) => [key, given[key]])), known, "The run's configuration");
      check(given);
      return true;
    },
    // Run even when a field failed its own type check, so the package's message is the one reported.
    { when: () => true },
  ) as unknown as T;
}

/** An input field whose value `check` inspects as given (before zod's own type check), throwing ConfigurationError. */
export function checkedInput<T extends z.ZodType>(field: T, check: (value: unknown) => void): T {
  return field.refine(
    (value: unknown) => {
      check(value);
      return true;
    },
    { when: () => true },
  ) as unknown as T;
}
