/** Entry point for langgraph.json: the deterministic validation graph, configured from the environment and each run's config. */
import { buildValidationGraph } from "../src/validation/graph.js";

export const graph = buildValidationGraph();
