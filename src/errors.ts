/**
 * Typed errors. Each has a stable `name` so callers (and the LangGraph server,
 * which reports `name: message`) can tell a bad configuration from a provider
 * failure without parsing strings.
 */

const MARK = Symbol.for("langgraph-trustworthy-output.error");

/**
 * The base of every error this package throws. Each class names itself with a
 * static `kind` (a string written in the source, so a bundler that shortens
 * class names cannot change it), and each error carries the kinds of its class
 * and of every class above it under a registry symbol. So `isInstance` works
 * across copies of the package (two installs, a bundler's duplicate), where
 * `instanceof` does not: `ProviderError.isInstance(error)`. Each error also has
 * a stable `code` to branch on (`error.code === "PROVIDER"`).
 */
export class TrustworthyOutputError extends Error {
  static readonly kind: string = "TrustworthyOutputError";
  /** A stable code for this kind of error, for callers that branch on it. */
  readonly code: string = "TRUSTWORTHY_OUTPUT";
  readonly [MARK]: readonly string[];

  constructor(message?: string, options?: { cause?: unknown }) {
    super(message, options);
    const kinds: string[] = [];
    for (let c: unknown = new.target; typeof c === "function" && c !== Error; c = Object.getPrototypeOf(c)) {
      if (Object.hasOwn(c, "kind")) kinds.push((c as unknown as { kind: string }).kind);
    }
    this[MARK] = kinds;
  }

  /** Whether `error` is this kind of error (or a subclass of it), thrown by any copy of this package. */
  static isInstance<T extends Error>(this: (abstract new (...args: any[]) => T) & { kind: string }, error: unknown): error is T {
    if (error === null || typeof error !== "object") return false;
    if (error instanceof this) return true;
    const kinds = (error as Record<symbol, unknown>)[MARK];
    return Array.isArray(kinds) && kinds.includes(this.kind);
  }
}

/** Bad run configuration or bad input: refused before any model call. */
export class ConfigurationError extends TrustworthyOutputError {
  static override readonly kind: string = "ConfigurationError";
  override readonly code: string = "CONFIGURATION";
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
  static override readonly kind: string = "SpecError";
  override readonly code: string = "SPEC";
  override readonly name: string = "SpecError";
}

/**
 * A model request that had no complete answer within its deadline (LLM_TIMEOUT_MS), raised by the
 * model factory's client whatever the phase: waiting for headers, reading the body, or between chunks.
 */
export class ModelTimeoutError extends TrustworthyOutputError {
  static override readonly kind: string = "ModelTimeoutError";
  override readonly code: string = "MODEL_TIMEOUT";
  // "TimeoutError", like the client's own timeouts, so LangChain's client retries it; never "AbortError",
  // which a provider SDK's stream reader takes for a deliberate cancel and ends the answer silently.
  override readonly name = "TimeoutError";
  readonly timeoutMs: number;
  /** The answer had started to stream: the client cannot retry it, the graph node may. */
  readonly streamed: boolean;

  constructor(timeoutMs: number, streamed: boolean) {
    super(`Request timed out: no complete answer within ${timeoutMs} ms (LLM_TIMEOUT_MS)${streamed ? "; the answer had started streaming" : ""}`);
    this.timeoutMs = timeoutMs;
    this.streamed = streamed;
  }
}

/**
 * A run that asked for a thread another run holds (one run per thread at a time, across processes): refused at
 * once under the "reject" strategy, or under "enqueue" when the thread's queue is full or the wait ran out.
 * Nothing was run and nothing was written.
 */
export class ThreadBusyError extends TrustworthyOutputError {
  static override readonly kind: string = "ThreadBusyError";
  override readonly code: string = "THREAD_BUSY";
  override readonly name = "ThreadBusyError";
  readonly threadId: string;
  /** Why the run could not have its thread: another run holds it, the thread's queue is full, or the wait ran out. */
  readonly reason: "running" | "queue-full" | "wait-timeout";

  constructor(threadId: string, reason: ThreadBusyError["reason"], detail: string) {
    super(`Thread ${JSON.stringify(truncate(threadId, 200))} is busy: ${detail}`);
    this.threadId = threadId;
    this.reason = reason;
  }
}

/**
 * The lock that kept a run alone on its thread was lost while the run went on (its database connection
 * died): the run was stopped, and whatever it produced is not reported as the thread's, since another
 * run may have taken the thread meanwhile.
 */
export class ThreadLockLostError extends TrustworthyOutputError {
  static override readonly kind: string = "ThreadLockLostError";
  override readonly code: string = "THREAD_LOCK_LOST";
  override readonly name = "ThreadLockLostError";
  readonly threadId: string;

  constructor(threadId: string, options?: { cause?: unknown }) {
    super(
      `The lock on thread ${JSON.stringify(truncate(threadId, 200))} was lost (its database connection closed) while the run held it; the run was stopped and its result is not reported. Run it again.`,
      options,
    );
    this.threadId = threadId;
  }
}

/** The model provider failed (after the client's own retries). */
export class ProviderError extends TrustworthyOutputError {
  static override readonly kind: string = "ProviderError";
  override readonly code: string = "PROVIDER";
  override readonly name = "ProviderError";
  /** HTTP status when the provider answered with one. */
  readonly status?: number;
  /** Which graph node was calling the model. */
  readonly node?: string;
  /** Whether the graph should try the call again: faults the client does not retry itself (e.g. an empty answer). */
  readonly transient: boolean;

  constructor(message: string, options: { cause?: unknown; status?: number; node?: string; transient?: boolean } = {}) {
    // Every message is redacted here, so no path (run errors, the service's 502, the CLI) can pass a key on.
    super(redactSecrets(message), { cause: options.cause });
    this.status = options.status;
    this.node = options.node;
    this.transient = options.transient ?? false;
  }

  /** Wrap whatever the client threw into a ProviderError that says what the provider said. */
  static from(error: unknown, node?: string): ProviderError {
    if (error instanceof ProviderError) return error;
    const e = error as { status?: unknown; statusCode?: unknown; message?: unknown; name?: unknown; code?: unknown };
    // Clients name the HTTP status `status` or `statusCode`.
    const status = typeof e?.status === "number" ? e.status : typeof e?.statusCode === "number" ? e.statusCode : undefined;
    const said =
      (typeof e?.message === "string" && e.message.length > 0 && e.message !== "[object Object]" ? e.message : whatWasSaid(error)) + causeDetail(error);
    // Some provider SDKs' errors keep the name "Error"; their class says what they are (APIConnectionError).
    const className = typeof error === "object" && error !== null ? (error as object).constructor?.name : undefined;
    const named = typeof e?.name === "string" && e.name !== "Error" ? e.name : undefined;
    const name = named ?? (status === undefined && className && className !== "Error" && className !== "Object" ? className : "");
    const kind = name ? `${name}: ` : "";
    const where = node ? ` in node "${node}"` : "";
    const prefix = status ? `Model provider failed${where} with HTTP ${status}` : `Model provider failed${where}`;
    // The client has already retried HTTP errors, connection faults and timeouts with backoff;
    // anything else (a malformed body, no choices) is worth another try at the node level.
    // A streamed answer that stalled past the deadline never reached the client's retries: the node retries it.
    const streamStalled = error instanceof ModelTimeoutError && error.streamed;
    const clientRetried = !streamStalled && (status !== undefined || /Connection|Timeout|Abort/i.test(name));
    // LangChain's client stops at once on a 429 without retry-after ("capacity") and leaves the waiting to the caller.
    const capacity = (error as { rateLimitType?: unknown })?.rateLimitType === "capacity";
    const transient = !clientRetried || capacity;
    // Redact before truncating, so a cut cannot leave the start of a key behind.
    return new ProviderError(`${prefix}: ${kind}${truncate(redactSecrets(said), 500)}`, { cause: error, status, node, transient });
  }
}

/**
 * What an error says when its message does not: a client's ResponseError that keeps the server's `error`
 * field, an object when a proxy of another API stands in front of the server ({"error": {"message": …}}),
 * has the message "[object Object]".
 */
function whatWasSaid(error: unknown): string {
  const field = (error as { error?: unknown } | null)?.error;
  if (typeof field === "string" && field.length > 0) return field;
  if (field !== null && typeof field === "object") {
    const message = (field as { message?: unknown }).message;
    if (typeof message === "string" && message.length > 0) return message;
    try {
      return JSON.stringify(field).slice(0, 500);
    } catch {
      // A cycle: fall through to the error's own text.
    }
  }
  return String(error);
}

/**
 * What lies under a connection fault ("Connection error." alone says nothing): the causes' messages,
 * e.g. " (fetch failed: connect ECONNREFUSED 127.0.0.1:9)".
 */
function causeDetail(error: unknown): string {
  const parts: string[] = [];
  let cause = (error as { cause?: unknown })?.cause;
  for (let depth = 0; depth < 3 && cause !== null && typeof cause === "object"; depth++) {
    const message = (cause as { message?: unknown }).message;
    if (typeof message === "string" && message.length > 0 && !parts.includes(message)) parts.push(message);
    cause = (cause as { cause?: unknown }).cause;
  }
  return parts.length > 0 ? ` (${parts.join(": ")})` : "";
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

// ---------------------------------------------------------------------------
// Secrets in error text

/** Keys the model factory was configured with; bounded, since a server may see many settings. */
const configuredSecrets = new Set<string>();
const MAX_SECRETS = 64;
/** Shorter values are not treated as secrets: redacting "a" or "key" everywhere would garble messages. */
const MIN_SECRET_LENGTH = 6;

/** Remember a configured key (the model factory calls this), so error text that echoes it is redacted. */
export function registerSecret(secret: string | undefined): void {
  if (!secret || secret.length < MIN_SECRET_LENGTH || configuredSecrets.has(secret)) return;
  if (configuredSecrets.size >= MAX_SECRETS) configuredSecrets.delete(configuredSecrets.values().next().value as string);
  configuredSecrets.add(secret);
}

const REDACTED = "[redacted]";

/**
 * Error text with secrets replaced by "[redacted]": every configured key (the provider keys the environment
 * module read, and those the model factory was given), `Bearer …` tokens, `sk-…`-shaped keys and credentials in URLs. Providers and proxies echo the Authorization
 * header in their error bodies; what they say is passed on, the key is not.
 */
export function redactSecrets(text: string): string {
  let out = text;
  // Longest first, so a key that contains another is replaced whole.
  const secrets = [...configuredSecrets].sort((a, b) => b.length - a.length);
  for (const secret of secrets) out = out.split(secret).join(REDACTED);
  return (
    out
      .replace(/\bBearer\s+[^\s"',;]+/gi, `Bearer ${REDACTED}`)
      // Credentials in a URL (http://user:password@host/…), which fetch errors quote.
      .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@"']+@/gi, `$1${REDACTED}@`)
      .replace(/\bsk-[A-Za-z0-9_-]{6,}/g, REDACTED)
  );
}
