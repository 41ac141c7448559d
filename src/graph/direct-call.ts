/**
 * A graph function run as a plain call. LangGraph runs a plain function given
 * as a node or as a conditional edge inside LangChain's async-local context
 * (`runWithConfig`), which builds a callback manager and a langsmith `RunTree`
 * on every call even with tracing off; an edge function is moreover a traced
 * run of its own. A Runnable given as a node or an edge is used as it is, so
 * this one calls the function directly with the config LangGraph passes (the
 * package's graph against its two-node floor: BENCHMARKS.md, sections 2 and 7).
 *
 * What such a function gives up is the async-local context of its own: it must
 * take its config as an argument and pass it on (to model calls, for
 * callbacks, streaming and cancellation), and it cannot call `interrupt()`,
 * which reads that context (the review node stays a plain function).
 * tests/validation/runs.test.ts fails if an upgrade wraps these again.
 */
import { Runnable, type RunnableConfig } from "@langchain/core/runnables";

export class DirectCall<I, O> extends Runnable<I, O> {
  lc_namespace = ["langgraph-trustworthy-output", "graph"];

  constructor(private readonly fn: (input: I, config: RunnableConfig) => O | Promise<O>) {
    super();
    this.name = fn.name;
  }

  async invoke(input: I, config?: RunnableConfig): Promise<O> {
    return this.fn(input, config ?? {});
  }
}
