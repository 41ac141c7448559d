/**
 * What one row of the providers' table (./index.ts) says: the client package, the environment variables, how
 * its chat model is built, how each output mode is asked for, what "auto" asks for, the subset of JSON Schema
 * it takes, its stop words and its documented limits. One file per provider fills one row; nothing outside
 * src/providers/ names a provider.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { JsonSchema } from "../specs/spec.js";
import type { SchemaProfile } from "./schema-subset.js";
import type { StrictDialect, StrictLimits } from "./strict-form.js";

/**
 * How a provider says why an answer ended: the field its client leaves on the message, and which of its
 * values mean the model finished, cut the answer at a limit, or withheld it. Any other value, and no
 * value at all, means the answer did not finish (docs/providers.md has the table).
 */
export interface StopWords {
  /** The field (in `response_metadata` or `additional_kwargs`). */
  field: string;
  /** The model finished its answer: the only stops an answer can be valid after. */
  finished: readonly string[];
  /** Cut at the output limit or the context window: the answer is incomplete, and a shorter one may fit. */
  cut: readonly string[];
  /** The provider withheld the answer (a refusal, a safety or recitation block). */
  withheld: readonly string[];
}

/** A provider's settings as read from the environment variables its row names. */
export interface ProviderSettings {
  apiKey?: string;
  baseUrl?: string;
}

/** What a row's builder is given: the model's own name (without the provider's prefix) and the run's settings. */
interface BuildRequest {
  /** The model's own name, as its provider knows it. */
  model: string;
  /** The name as written (`provider/model`), for messages. */
  name: string;
  temperature?: number;
  settings: ProviderSettings;
  timeoutMs: number;
  maxRetries: number;
}

/**
 * What a structured-output request is made from: a name providers accept, a description, and the spec's own
 * schema object (transforms of it are cached per object; `sendable` takes out what no provider wants).
 */
export interface SchemaRequest {
  name: string;
  description: string;
  schema: JsonSchema;
}

/** The schema as providers take it: without `$schema` (some refuse it). */
export function sendable(schema: JsonSchema): JsonSchema {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

/** How a request asked in a mode was sent: the call options, keywords left out, and whether it was strict (or why not). */
export interface ModeRequest {
  options: Record<string, unknown>;
  /** Not sent: the preflight found the request past a documented limit, so it would be refused (the next mode is asked instead). */
  preflight?: string;
  dropped?: string[];
  /** Sent with `strict: true` in the strict form of the schema: the answer is mapped back before it is judged. */
  strict?: boolean;
  /** The strict form lets an answer differ from the spec's shape until it is mapped back (introduced nulls, a wrapped root, a map's entries). */
  reshaped?: boolean;
  /** Why a request that could have been strict was not. */
  notStrict?: string;
}

/** A documented number, and where it is documented. */
interface Sourced<T> {
  value: T;
  source: string;
}

/** The forced tool an answer is asked for in tool mode: its parameters, and whether the provider is to hold the call to them (strict). */
export interface ToolRequest {
  parameters: JsonSchema;
  /** Sent with `strict: true`: the provider holds the arguments to the parameters while it decodes. */
  strict?: boolean;
  /** The strict form lets the arguments differ from the spec's shape until they are mapped back (a wrapped root, a map's entries). */
  reshaped?: boolean;
  /** Keywords of the spec's schema the strict tool does not take, left out (the validator checks them all). */
  dropped?: string[];
  /** Why the tool was sent without strict (a documented limit passed, or a construct strict mode cannot carry). */
  notStrict?: string;
}

/** One provider: everything the package knows of it. */
export interface ProviderRow<Module = unknown> {
  /** Its name in messages and help texts. */
  title: string;
  /** A model's own name, for examples in help texts. */
  example: string;
  /** The environment variables read, each with a line of help (the command line's help lists them). */
  help: ReadonlyArray<readonly [variable: string, says: string]>;
  /** The client package, and the release this package is tested with (named in the install hint). */
  package: string;
  tested: string;
  /** How the client names itself (`_llmType()`): how a chat model of this provider is recognised. */
  client: string;
  /** The provider its client names in the metadata it gives callbacks (LangSmith's `ls_provider`): how a model given by name is recognised. */
  traced: string;
  /** The environment variables read: the key (the first set wins) and the base URL of another server speaking its API. */
  env: { apiKey: readonly string[]; baseUrl: string };
  /** The endpoint its client calls when no base URL is set. */
  defaultBaseUrl: string;
  /** What a request needs from the settings, as a sentence when it is missing (undefined: it has what it needs). */
  missing(settings: ProviderSettings, name: string): string | undefined;
  /** Loads the client package (an optional peer dependency); absent for the package's own dependency. */
  load?: () => Promise<Module>;
  /** Builds its chat model, bounded by the run's deadline (./deadline.ts). */
  build(module: Module, request: BuildRequest): BaseChatModel;
  /** Its stop words, in the fields its client leaves them (the first is named when an answer ends without any). */
  stops: readonly StopWords[];
  /** What a model name may hold where it goes into a URL. */
  urlName?: { pattern: RegExp; says: string };
  /** The mode "auto" asks for: its own structured output, and what it is called in help texts. */
  auto: "json_schema" | "tool";
  autoSays: string;
  /** Its JSON modes, as call options; a mode it lacks is absent. `strictRefused`: what it said when it refused a strict request. */
  modes: {
    json_object?: (request: SchemaRequest) => ModeRequest;
    json_schema?: (request: SchemaRequest, strictRefused?: string) => ModeRequest;
  };
  /** Its forced tool for tool mode, where it has a strict one (else the spec's schema as the tool's parameters). */
  tool?: (request: SchemaRequest, strictRefused?: string) => ToolRequest;
  /** The subset of JSON Schema its structured output takes, where it takes only a subset. */
  profile?: SchemaProfile;
  /** Its strict mode's dialect, where it has one: the strict form its strict requests send, by which their answers are mapped back (./strict-form.ts). */
  strictDialect?: StrictDialect;
  /** Its documented limits on a strict schema, checked before the call, each with its source (the strict form's limits, or its own). */
  strictLimits?: { [K in keyof Omit<StrictLimits, "provider">]: Sourced<StrictLimits[K]> } | Readonly<Record<string, Sourced<number>>>;
}

/** The limits as the strict form's check takes them (the numbers without their sources). */
export function limitsOf(row: ProviderRow<any>): StrictLimits | undefined {
  const sourced = row.strictLimits;
  if (sourced === undefined || !("nesting" in sourced)) return undefined;
  return { provider: row.title, ...Object.fromEntries(Object.entries(sourced).map(([k, v]) => [k, v.value])) } as StrictLimits;
}
