/**
 * A StateGraph whose compiled graph runs each invocation inside traceInvocation (../telemetry/open-telemetry.ts):
 * the spans an invocation holds open between its steps end with it, whichever way it ends (its verdict, an
 * interrupt, a thrown error, an abort, a reader that stops reading). A node cannot see that end: LangGraph runs
 * nodes inside the invocation and tells them nothing when it stops, so the end is watched where the invocation is
 * streamed. `invoke`, `stream` and `streamEvents` all read a LangChain Runnable through its `_streamIterator`,
 * the method a Runnable that streams provides; this graph's delegates to LangGraph's own, unchanged.
 * tests/telemetry/run-end.test.ts fails if an upgrade takes a path around it.
 */
import { CompiledStateGraph, isGraphBubbleUp, StateGraph } from "@langchain/langgraph";
import { traceInvocation } from "../telemetry/open-telemetry.js";

// `any`: the graph's types are the builder's, carried by the StateGraph type TracedStateGraph is given below.
class TracedCompiledGraph extends CompiledStateGraph<any, any, any, any, any, any, any, any, any, any> {
  override async *_streamIterator(input: any, options?: any): AsyncGenerator<any> {
    // An interrupt (or a command) a subgraph hands up to its parent graph is a pause, not a failure.
    yield* traceInvocation(() => super._streamIterator(input, options), { signal: options?.signal as AbortSignal | undefined, paused: isGraphBubbleUp });
  }
}

class TracedBuilder extends StateGraph<any, any, any, any, any, any, any, any> {
  override compile(options?: any): any {
    // A copy of LangGraph's compiled graph, as its own withConfig makes one (`new this.constructor({ ...this })`).
    return new TracedCompiledGraph({ ...super.compile(options) });
  }
}

/** StateGraph, typed as LangGraph's, whose `compile()` returns a graph traced per invocation. */
export const TracedStateGraph = TracedBuilder as unknown as typeof StateGraph;
