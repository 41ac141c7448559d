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
import { addUsage, ZERO_USAGE, type TokenUsage } from "../shared/usage.js";

export const TokenUsageSchema = z
  .object({
    inputTokens: z.number().meta({ title: "Input tokens", description: "Prompt tokens" }),
    outputTokens: z.number().meta({ title: "Output tokens", description: "Completion tokens" }),
    totalTokens: z.number().meta({ title: "Total tokens", description: "Prompt + completion tokens" }),
    calls: z.number().meta({ title: "Model calls", description: "Model calls" }),
  })
  .meta({ title: "Token usage", description: "Token usage" });

/** A usage channel: each update is added to the running total. */
export function usageChannel(description = "Total token usage of the run", title = "Token usage") {
  // The default lives in the registry (the channel's initial value) and in the
  // metadata (the JSON Schema): a zod .default() would make the type optional.
  return TokenUsageSchema.meta({ title, description, default: { ...ZERO_USAGE } }).register(registry, {
    reducer: { fn: (total: TokenUsage, next: TokenUsage) => addUsage(total, next) },
    default: () => ({ ...ZERO_USAGE }),
  });
}

/** An append-only list channel: each update's items are appended. Without a title, stateObject gives it one from its key. */
export function appendChannel<T extends z.ZodType>(item: T, description: string, title?: string) {
  return z
    .array(item)
    .meta({ ...(title === undefined ? {} : { title }), description, default: [] })
    .register(registry, {
      reducer: { fn: (list: z.output<T>[], next: z.output<T>[]) => list.concat(next) },
      default: () => [],
    });
}

/**
 * A zod object whose fields' `.default()` values are also the initial values
 * of the graph's channels (LangGraph reads channel defaults from its schema
 * registry, not from zod itself). A field without a title gets one from its
 * key (`stopReason` → "Stop reason"), so every field of every form Studio
 * shows has one.
 */
export function stateObject<T extends z.core.$ZodLooseShape>(shape: T) {
  for (const [key, field] of Object.entries(shape) as [string, z.ZodType][]) {
    if (field instanceof z.ZodDefault && !registry.has(field)) field.register(registry, {});
    const meta = z.globalRegistry.get(field);
    // Added to the field's own metadata (not a clone), so its LangGraph registry entry still applies.
    if (meta?.title === undefined) z.globalRegistry.add(field, { ...meta, title: titleFromKey(key) });
  }
  return z.object(shape);
}

/** A form title from a field key: "maxAttempts" → "Max attempts", "stop_reason" → "Stop reason". */
function titleFromKey(key: string): string {
  const words = key
    .replace(/[_-]+/g, " ")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .trim()
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
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
