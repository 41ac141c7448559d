/**
 * The two graphs as a LangGraph server serves them (langgraph.json `graphs`): the validation graph, configured from
 * the environment and each run's config, and Reflexion, whose long-term memory uses the server's store. The
 * repository's graphs/ and a project's own langgraph.json (through `langgraph-trustworthy-output/server`) name these.
 */
import { missingProviderNotice } from "../models.js";
import { buildReflexionGraph } from "../reflexion/graph.js";
import { buildValidationGraph } from "../validation/graph.js";

/** The validation graph, for the graph id `validation` (the state-write rules know it by that id). */
export const validationGraph = buildValidationGraph();

/** The Reflexion graph, for the graph id `reflexion` (the state-write rules know it by that id). */
export const reflexionGraph = buildReflexionGraph();

// Said once at start, not at the first run's failure.
const notice = missingProviderNotice();
if (notice) console.warn(notice);
