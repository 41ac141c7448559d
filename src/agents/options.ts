/** The agent middleware's rule-context option. (Its attempt bounds are the shared ones of ../settings.ts.) */

/** Facts a spec's code rules read (their third argument): a value, or computed from the run, e.g. `(run) => run.context` (what `agent.invoke(input, { context })` was given). */
export type RuleContextOption = unknown | ((run: { context: unknown }) => unknown);

/** The rules' context for a run with this context. */
export function ruleContextFor(option: RuleContextOption, context: unknown): unknown {
  return typeof option === "function" ? (option as (run: { context: unknown }) => unknown)({ context }) : option;
}
