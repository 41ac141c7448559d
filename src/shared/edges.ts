/**
 * An edge's routing function, run as a plain call. LangGraph runs a function
 * given as a conditional edge inside a RunnableLambda, a traced run of its own
 * on every pass (callbacks, and a langsmith RunTree even with tracing off): a
 * measured 5% of a two-attempt validation run for the edge from START alone.
 * A Runnable given as the edge is used as it is (LangGraph wraps only plain
 * functions), so this one calls the function directly with the run's config.
 * tests/validation/runs.test.ts fails if an upgrade wraps it again.
 */
import { Runnable, type RunnableConfig } from "@langchain/core/runnables";

export class DirectEdge<I, O> extends Runnable<I, O> {
  lc_namespace = ["langgraph-trustworthy-output", "edges"];

  constructor(private readonly route: (input: I, config: RunnableConfig) => O) {
    super();
    this.name = route.name;
  }

  async invoke(input: I, config?: RunnableConfig): Promise<O> {
    return this.route(input, config ?? {});
  }
}
