/**
 * The rule for state writes on the LangGraph server: the verdict cannot be written.
 *
 * A thread's outcome (the validation graph's `success`, `value`, `errors`,
 * `stopReason`, `history`, …; Reflexion's `results`, `outcomes`, …) is made
 * only by the graph's own nodes: the validator, or a person's answer at the
 * review step, itself held to the spec. Every way of writing a thread's
 * channels from outside could otherwise forge it, so:
 *   - a state write (`POST /threads/{id}/state`, a new thread's `supersteps`)
 *     may set only the graph's input field (`request`; Reflexion's `tasks`),
 *     written as the input (`as_node: "__start__"`) on the thread's latest
 *     state, when nothing is pending there: exactly the state a run's input
 *     makes, so the next step is the one that clears the last outcome and
 *     starts a new run;
 *   - a run's `command` may carry only `resume` (its `update` writes the same
 *     channels; its `goto` skips steps or hands a node arbitrary input);
 *   - a thread's `graph_id` (which graph the server reads and writes it with)
 *     cannot be changed by a metadata patch.
 * A graph without an entry in WRITABLE accepts no state write at all.
 *
 * Pure functions of the request (and of what the server says about the
 * thread); ./http.ts applies them to the routes, with auth on and off.
 */
import { checkRequestText } from "../settings.js";
import { checkTasks } from "../reflexion/configuration.js";
import { ConfigurationError } from "../errors.js";
import { ReflexionInputSchema, ReflexionState } from "../reflexion/state.js";
import { ValidationInputSchema, ValidationState } from "../validation/state.js";

/** A refusal: the HTTP status and the JSON body `{ error, message }`. */
export interface Refusal {
  status: 403 | 409 | 413 | 422;
  body: { error: string; message: string };
}

/** The node a state write must name to be taken as the graph's input. */
export const INPUT_NODE = "__start__";

interface GraphRule {
  /** Fields a state write may set: the graph's input. */
  writable: readonly string[];
  /** Every other field of the state: the outcome and the run's records. */
  protected: readonly string[];
  /** The graph's own check of an input value (throws a ConfigurationError). */
  check(field: string, value: unknown): void;
  /** Why the outcome is not writable, and what to do instead. */
  instead: string;
}

const fieldsOf = (shape: object) => Object.keys(shape);
const exceptInput = (all: string[], input: readonly string[]) => all.filter((f) => !input.includes(f));

const validationInput = fieldsOf(ValidationInputSchema.shape);
const reflexionInput = fieldsOf(ReflexionInputSchema.shape);

export const WRITABLE: Readonly<Record<string, GraphRule>> = {
  validation: {
    writable: validationInput,
    protected: exceptInput(fieldsOf(ValidationState.shape), validationInput),
    check: (field, value) => void checkRequestText(value, field),
    instead:
      "The verdict is made only by the validator or by a person's review answer, which is held to the same spec. " +
      'Resume a paused run with Command({ resume }): {"type": "edit", "value": <the corrected JSON>}, {"type": "retry", "request": "<a new request>"} or {"type": "reject"}; ' +
      'start a new run with input {"request": "…"}.',
  },
  reflexion: {
    writable: reflexionInput,
    protected: exceptInput(fieldsOf(ReflexionState.shape), reflexionInput),
    check: (field, value) => void checkTasks(value),
    instead:
      "A Reflexion run's results and outcomes are made only by its nodes (the evaluator and, with a spec, the validator). " +
      'Start a new run with input {"tasks": […]}; resume an interrupted run with Command({ resume }).',
  },
};

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const quoted = (names: readonly string[]) => names.map((n) => JSON.stringify(n)).join(", ");
const forbidden = (message: string): Refusal => ({ status: 403, body: { error: "Forbidden", message } });

function ruleOf(graphId: unknown): GraphRule | Refusal {
  const rule = typeof graphId === "string" && Object.hasOwn(WRITABLE, graphId) ? WRITABLE[graphId] : undefined;
  if (rule) return rule;
  return forbidden(
    graphId == null
      ? "This thread belongs to no graph yet (its metadata has no graph_id), so no state write is accepted: start a run on it instead."
      : `State writes are not accepted on threads of the graph ${JSON.stringify(graphId)}: only the graphs ${quoted(Object.keys(WRITABLE))} have writable fields.`,
  );
}

const isRefusal = (value: GraphRule | Refusal): value is Refusal => "status" in value;

/** What every refusal of a field says: what may be written, and why the rest may not. */
function allowed(graphId: string, rule: GraphRule): string {
  return (
    `A state write to a thread of the ${JSON.stringify(graphId)} graph may set only ${quoted(rule.writable)}, ` +
    `written as the input (as_node ${JSON.stringify(INPUT_NODE)}), which starts a new run. ${rule.instead}`
  );
}

/** One update of a state write: its values and the node it is written as. */
interface StateUpdate {
  values: unknown;
  asNode: unknown;
  command?: unknown;
}

/**
 * The refusal of one update to a thread of `graphId`, or undefined when the
 * rule accepts it (the thread's own state is checked by pendingRefusal).
 */
function updateRefusal(graphId: unknown, update: StateUpdate): Refusal | undefined {
  const rule = ruleOf(graphId);
  if (isRefusal(rule)) return rule;
  const graph = graphId as string;
  if (update.command != null) {
    return forbidden(`A state write may not carry a command (it can write any field or jump to any node). ${allowed(graph, rule)}`);
  }
  const values = update.values;
  const fields = isObject(values) ? Object.keys(values) : [];
  const extra = fields.filter((f) => !rule.writable.includes(f)).sort();
  if (extra.length > 0) {
    const outcome = extra.filter((f) => rule.protected.includes(f));
    const unknown = extra.filter((f) => !rule.protected.includes(f));
    const parts = [
      ...(outcome.length > 0 ? [`${quoted(outcome)} (the run's outcome and records)`] : []),
      ...(unknown.length > 0 ? [`${quoted(unknown)} (not fields of the graph's state)`] : []),
    ];
    return forbidden(`Not writable: ${parts.join("; ")}. ${allowed(graph, rule)}`);
  }
  if (!isObject(values) || fields.length === 0) {
    return forbidden(
      `This state write sets no field${Array.isArray(values) ? " (values must be one object, not a list)" : ""}; ` +
        `written as a node, an empty write would move the run past that node without running it. ${allowed(graph, rule)}`,
    );
  }
  if (update.asNode !== INPUT_NODE) {
    return forbidden(
      `${quoted(fields)} may be written only as the input (as_node ${JSON.stringify(INPUT_NODE)}); ` +
        `got as_node ${update.asNode === undefined ? "unset" : JSON.stringify(update.asNode)}, which would attach it to the last run's outcome. ${allowed(graph, rule)}`,
    );
  }
  for (const field of fields) {
    try {
      rule.check(field, values[field]);
    } catch (error) {
      if (!(error instanceof ConfigurationError)) throw error;
      return { status: 422, body: { error: "UnprocessableEntity", message: error.message } };
    }
  }
  return undefined;
}

/** The refusal of a `POST /threads/{id}/state` body to a thread of `graphId`, or undefined. */
export function stateWriteRefusal(graphId: unknown, body: unknown): Refusal | undefined {
  const b = isObject(body) ? body : {};
  const rule = ruleOf(graphId);
  if (isRefusal(rule)) return rule;
  const refusal = updateRefusal(graphId, { values: b.values, asNode: b.as_node });
  if (refusal) return refusal;
  if (b.checkpoint_id != null || b.checkpoint != null) {
    return forbidden(
      `A state write applies to the thread's latest state only, not to an earlier checkpoint (a fork there would pair the new input with that checkpoint's outcome). ${allowed(graphId as string, rule)}`,
    );
  }
  return undefined;
}

/**
 * The refusal of an accepted write when the thread has something pending at
 * its latest state (a run paused for review, interrupted, or not finished),
 * from the thread's state as the server reports it: `next` and its tasks' interrupts.
 */
export function pendingRefusal(graphId: string, state: { next?: unknown; tasks?: unknown }): Refusal | undefined {
  const next = Array.isArray(state.next) ? state.next.map(String) : [];
  const tasks = Array.isArray(state.tasks) ? state.tasks : [];
  const interrupted = tasks.some((t) => isObject(t) && Array.isArray(t.interrupts) && t.interrupts.length > 0);
  if (next.length === 0 && !interrupted) return undefined;
  const rule = WRITABLE[graphId];
  const where = next.includes("review") ? 'paused for review (at "review")' : `not finished (next: ${quoted(next)})`;
  return {
    status: 409,
    body: {
      error: "Conflict",
      message:
        `This thread's run is ${where}: no state write is accepted until it ends. ` +
        `${rule?.instead ?? "Resume it with Command({ resume }), or start a new run with input."}`,
    },
  };
}

/**
 * The refusal of a run's `command` (any graph), or undefined: only `resume`
 * may be given. Its size and depth are bounded at the door (./request-bounds.ts).
 */
export function commandRefusal(command: unknown): Refusal | undefined {
  if (!isObject(command)) return undefined;
  const used = ["update", "goto"].filter((k) => {
    const v = command[k];
    return v != null && !(Array.isArray(v) && v.length === 0) && !(isObject(v) && Object.keys(v).length === 0);
  });
  if (used.length === 0) return undefined;
  return forbidden(
    `A run's command may carry only "resume" on this server; not ${used.map((k) => `"command.${k}"`).join(" or ")}. ` +
      "command.update writes the thread's state as a state write does (the verdict included), and command.goto skips steps or hands a node arbitrary input: " +
      "the outcome of a run is made only by its graph's nodes (for the validation graph: the validator, or a person's review answer held to the same spec). " +
      'Resume a paused run with Command({ resume }) alone (at the validation review: {"type": "edit", "value": …}, {"type": "retry", "request": …} or {"type": "reject"}); start a new run with input.',
  );
}

/** The refusal of a run-creating body (one run, or a batch), or undefined. */
export function runBodyRefusal(body: unknown): Refusal | undefined {
  for (const run of Array.isArray(body) ? body : [body]) {
    const refusal = isObject(run) ? commandRefusal(run.command) : undefined;
    if (refusal) return refusal;
  }
  return undefined;
}

/**
 * The refusal of a `POST /threads` body with `supersteps`, or undefined. The
 * thread is new, so its graph is the one its metadata names (the server writes
 * the supersteps with that graph); a thread that may already exist
 * (`if_exists: "do_nothing"`) is refused, as the supersteps would skip the
 * checks of a state write to it.
 */
export function superstepsRefusal(body: unknown): Refusal | undefined {
  if (!isObject(body) || !Array.isArray(body.supersteps) || body.supersteps.length === 0) return undefined;
  const graphId = isObject(body.metadata) ? body.metadata.graph_id : undefined;
  const rule = ruleOf(graphId);
  if (isRefusal(rule)) return rule;
  if (body.if_exists === "do_nothing") {
    return forbidden(
      'supersteps apply only to a thread this request creates: drop if_exists "do_nothing" (to write an existing thread\'s state, POST /threads/{thread_id}/state).',
    );
  }
  const updates = body.supersteps.flatMap((step: unknown) => (isObject(step) && Array.isArray(step.updates) ? step.updates : [step]));
  if (updates.length !== 1) {
    return forbidden(`A new thread's supersteps may hold one update only, its input. ${allowed(graphId as string, rule)}`);
  }
  const [update] = updates as unknown[];
  const u = isObject(update) ? update : {};
  return updateRefusal(graphId, { values: u.values, asNode: u.as_node, command: u.command });
}

/** The refusal of a thread metadata patch that would change the thread's graph, or undefined. */
export function graphChangeRefusal(currentGraphId: unknown, body: unknown): Refusal | undefined {
  const metadata = isObject(body) && isObject(body.metadata) ? body.metadata : undefined;
  if (!metadata || !Object.hasOwn(metadata, "graph_id") || metadata.graph_id === currentGraphId) return undefined;
  return forbidden(
    `A thread's graph_id cannot be changed (from ${JSON.stringify(currentGraphId ?? null)} to ${JSON.stringify(metadata.graph_id)}): ` +
      "the server reads and writes the thread's state with that graph, and the rule of which fields a state write may set depends on it.",
  );
}

/**
 * The refusal of a thread-centric protocol command (`POST /threads/{id}/commands`), or undefined:
 * `input.respond` is a resume and may not carry `update` or `goto`.
 */
export function protocolCommandRefusal(body: unknown): Refusal | undefined {
  if (!isObject(body) || body.method !== "input.respond" || !isObject(body.params)) return undefined;
  return commandRefusal({ update: body.params.update, goto: body.params.goto, resume: body.params.responses ?? body.params.response });
}
