/**
 * Typed errors. Each has a stable `name` so callers (and the LangGraph server,
 * which reports `name: message`) can tell a bad configuration from a provider
 * failure without parsing strings.
 */

/** Bad run configuration or bad input: refused before any model call. */
export class ConfigurationError extends Error {
  override readonly name: string = "ConfigurationError";
  /** One line per problem, each saying what to change. */
  readonly problems: string[];

  constructor(problems: string[] | string) {
    const list = Array.isArray(problems) ? problems : [problems];
    super(list.length === 1 ? list[0] : `Invalid configuration:\n- ${list.join("\n- ")}`);
    this.problems = list;
  }
}

/** A spec (JSON Schema + rules) that cannot be compiled or is unsafe to run. */
export class SpecError extends ConfigurationError {
  override readonly name: string = "SpecError";
}

/** The model provider failed (after the client's own retries). */
export class ProviderError extends Error {
  override readonly name = "ProviderError";
  /** HTTP status when the provider answered with one. */
  readonly status?: number;
  /** Which graph node was calling the model. */
  readonly node?: string;
  /** Whether the graph should try the call again: faults the client does not retry itself (e.g. an empty answer). */
  readonly transient: boolean;

  constructor(message: string, options: { cause?: unknown; status?: number; node?: string; transient?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.status = options.status;
    this.node = options.node;
    this.transient = options.transient ?? false;
  }

  /** Wrap whatever the client threw into a ProviderError that says what the provider said. */
  static from(error: unknown, node?: string): ProviderError {
    if (error instanceof ProviderError) return error;
    const e = error as { status?: unknown; message?: unknown; name?: unknown; code?: unknown };
    const status = typeof e?.status === "number" ? e.status : undefined;
    const said = typeof e?.message === "string" && e.message.length > 0 ? e.message : String(error);
    const kind = typeof e?.name === "string" && e.name !== "Error" ? `${e.name}: ` : "";
    const where = node ? ` in node "${node}"` : "";
    const prefix = status ? `Model provider failed${where} with HTTP ${status}` : `Model provider failed${where}`;
    // The client has already retried HTTP errors, connection faults and timeouts with backoff;
    // anything else (a malformed body, no choices) is worth another try at the node level.
    const clientRetried = status !== undefined || /Connection|Timeout|Abort/i.test(String(e?.name ?? ""));
    // LangChain's client stops at once on a 429 without retry-after ("capacity") and leaves the waiting to the caller.
    const capacity = (error as { rateLimitType?: unknown })?.rateLimitType === "capacity";
    const transient = !clientRetried || capacity;
    return new ProviderError(`${prefix}: ${kind}${truncate(said, 500)}`, { cause: error, status, node, transient });
  }
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
