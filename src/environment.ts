/**
 * The one module that reads environment variables. Everything else receives
 * an Environment (nodes never read `process.env`); embedded code may pass its
 * own. The LangGraph dev server and the command line also load `.env` into
 * the environment first; this module does not read files.
 */
import { ConfigurationError, registerSecret, SpecError } from "./errors.js";
import { checkedSpecLimits, type RuntimeSpecLimits } from "./specs/limits.js";
import { modelNameProblem, providerSettings, type ModelProvider } from "./providers/index.js";

export const DEFAULT_MODEL = "gpt-4o-mini";
/**
 * The model name of the built-in simulated model (src/simulated/model.ts): seeded rules, not a language
 * model, no provider needed. Chosen only by this exact name, never as a fallback for a missing provider.
 */
export const SIMULATED_MODEL = "simulated";
/** The settings the package reads from the environment: the model, provider keys and URLs, the database. */
export interface Environment {
  /** Each provider's key and base URL, from the environment variables its row names (src/providers/, docs/providers.md); a provider not listed has none. */
  providers: Partial<Record<ModelProvider, { apiKey?: string; baseUrl?: string }>>;
  /** Default model name for every role (LLM_MODEL); `simulated` is the built-in simulated model (SIMULATED_MODEL). */
  model: string;
  /** Per-request timeout for model calls (LLM_TIMEOUT_MS). */
  timeoutMs: number;
  /** Client-side retries of failed model calls: 429, 5xx, network (LLM_MAX_RETRIES). */
  maxRetries: number;
  /** postgres://… enables durable checkpoints and store (DATABASE_URL). */
  databaseUrl?: string;
  /** Limits on specs supplied at run time other than the defaults (RUNTIME_SPEC_LIMITS, a JSON object such as {"maxChars": 200000}). */
  specLimits: Partial<RuntimeSpecLimits>;
}

function nonEmpty(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v ? v : undefined;
}

function intFromEnv(env: Readonly<Record<string, string | undefined>>, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigurationError(`${name} must be an integer from ${min} to ${max}; got ${JSON.stringify(raw)}.`);
  }
  return n;
}

function modelFromEnv(name: string | undefined): string {
  if (name === undefined) return DEFAULT_MODEL;
  const problem = modelNameProblem(name);
  if (problem !== undefined) throw new ConfigurationError(`LLM_MODEL: ${problem}.`);
  return name;
}

// The variables are typed as written out rather than as `NodeJS.ProcessEnv`, so the published declarations
// need no Node types (a project without @types/node that checks its libraries' declarations compiles them).
/** The package's settings from the environment (process.env by default), checked; the provider keys it reads are redacted from error text from then on. */
export function readEnvironment(env: Readonly<Record<string, string | undefined>> = process.env): Environment {
  const environment: Environment = {
    providers: providerSettings((name) => nonEmpty(env[name])),
    model: modelFromEnv(nonEmpty(env.LLM_MODEL)),
    timeoutMs: intFromEnv(env, "LLM_TIMEOUT_MS", 60_000, 100, 600_000),
    maxRetries: intFromEnv(env, "LLM_MAX_RETRIES", 2, 0, 10),
    databaseUrl: nonEmpty(env.DATABASE_URL),
    specLimits: readSpecLimits(env),
  };
  // Error text that echoes a provider key read here is redacted (a key passed in code is registered where it is used).
  for (const settings of Object.values(environment.providers)) registerSecret(settings?.apiKey);
  return environment;
}

/**
 * The operator's limits on specs supplied at run time (RUNTIME_SPEC_LIMITS: a JSON object naming the
 * limits to change, e.g. {"maxChars": 200000, "maxApplicationsPerValue": 64}); none when unset.
 */
export function readSpecLimits(env: Readonly<Record<string, string | undefined>> = process.env): Partial<RuntimeSpecLimits> {
  const raw = nonEmpty(env.RUNTIME_SPEC_LIMITS);
  if (raw === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigurationError(`RUNTIME_SPEC_LIMITS must be a JSON object such as {"maxChars": 200000}; got ${JSON.stringify(raw.slice(0, 80))}.`);
  }
  try {
    return checkedSpecLimits(parsed, "RUNTIME_SPEC_LIMITS");
  } catch (error) {
    throw error instanceof SpecError ? new ConfigurationError(error.message) : error;
  }
}
