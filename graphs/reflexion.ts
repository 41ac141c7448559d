/** Entry point for langgraph.json: the Reflexion graph; long-term memory uses the server's store. */
import { buildReflexionGraph } from "../src/reflexion/graph.js";

export const graph = buildReflexionGraph();
