// What langgraph.json names: the package's graphs, its auth handler (API keys from LANGGRAPH_API_KEYS) and its HTTP app.
export { app, auth, reflexionGraph, validationGraph } from "langgraph-trustworthy-output/server";
