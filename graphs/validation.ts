/** Entry point for langgraph.json: the deterministic validation graph, configured from the environment and each run's config. */
import { missingProviderNotice } from "../src/models.js";
import { buildValidationGraph } from "../src/validation/graph.js";

export const graph = buildValidationGraph();

// Said once at start (this entry point, not Reflexion's), not at the first run's failure.
const notice = missingProviderNotice();
if (notice) console.warn(notice);
