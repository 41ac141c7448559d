/**
 * State definitions both graphs share: the token-usage ledger, the
 * append-only list channel used for per-attempt and per-step records, and
 * `stateObject`, which builds a graph's state, input or output schema, and
 * `channelsOf`, the Annotation channels a graph runs on. The schemas are plain
 * zod v4 objects (not Annotation, not StateSchema) so that the LangGraph server
 * gives Studio forms with descriptions and defaults for the input, the output
 * and the run configuration.
 */
import { Annotation, type AnnotationRoot, type StateDefinition } from "@langchain/langgraph";
import { registry } from "@langchain/langgraph/zod";
import { z } from "zod";
import { addUsage, ZERO_USAGE, type TokenUsage } from "./usage.js";

export const TokenUsageSchema = z
  .object({
    inputTokens: z.number().describe("Prompt tokens"),
    outputTokens: z.number().describe("Completion tokens"),
    totalTokens: z.number().describe("Prompt + completion tokens"),
    calls: z.number().describe("Model calls"),
  })
  .describe("Token usage");

/** A usage channel: each update is added to the running total. */
export function usageChannel(description = "Total token usage of the run") {
  // The default lives in the registry (the channel's initial value) and in the
  // metadata (the JSON Schema): a zod .default() would make the type optional.
  return TokenUsageSchema.meta({ description, default: { ...ZERO_USAGE } }).register(registry, {
    reducer: { fn: (total: TokenUsage, next: TokenUsage) => addUsage(total, next) },
    default: () => ({ ...ZERO_USAGE }),
  });
}

/** An append-only list channel: each update's items are appended. */
export function appendChannel<T extends z.ZodType>(item: T, description: string) {
  return z
    .array(item)
    .meta({ description, default: [] })
    .register(registry, {
      reducer: { fn: (list: z.output<T>[], next: z.output<T>[]) => list.concat(next) },
      default: () => [],
    });
}

/**
 * A zod object whose fields' `.default()` values are also the initial values
 * of the graph's channels (LangGraph reads channel defaults from its schema
 * registry, not from zod itself).
 */
export function stateObject<T extends z.core.$ZodLooseShape>(shape: T) {
  for (const field of Object.values(shape) as z.ZodType[]) {
    if (field instanceof z.ZodDefault && !registry.has(field)) field.register(registry, {});
  }
  return z.object(shape);
}

/**
 * The channels of a zod state, as an Annotation: the same fields, reducers and
 * defaults. Graphs run on this and keep the zod objects for their input,
 * output and context, which is what Studio's forms are built from. A zod
 * state makes LangGraph re-derive and re-run a partial zod schema on every
 * node update; the Annotation channels skip that (the nodes are typed, and the
 * front door checks what comes in).
 */
export function channelsOf(schema: z.ZodObject): AnnotationRoot<StateDefinition> {
  const channels: StateDefinition = {};
  for (const [key, field] of Object.entries(schema.shape) as [string, z.ZodType][]) {
    const meta = registry.get(field) as { reducer?: { fn: (a: unknown, b: unknown) => unknown }; default?: () => unknown } | undefined;
    const initial = meta?.default ?? defaultOf(field);
    channels[key] = meta?.reducer
      ? Annotation<unknown, unknown>({ reducer: meta.reducer.fn, default: initial })
      : initial
        ? Annotation<unknown, unknown>({ reducer: (_current, next) => next, default: initial })
        : Annotation<unknown>();
  }
  return Annotation.Root(channels);
}

/** A getter for a zod field's default value, or undefined when it has none. */
function defaultOf(field: z.ZodType): (() => unknown) | undefined {
  if (!(field instanceof z.ZodDefault)) return undefined;
  return () => field.parse(undefined);
}
