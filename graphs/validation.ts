/** Entry point for langgraph.json: the deterministic validation graph, configured from the environment and each run's config. */
export { validationGraph as graph } from "../src/server/graphs.js";
