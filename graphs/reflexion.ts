/** Entry point for langgraph.json: the Reflexion graph; long-term memory uses the server's store. */
export { reflexionGraph as graph } from "../src/server/graphs.js";
