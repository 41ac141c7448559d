/**
 * Consumer fixture, in a project without the optional peer `langchain`: the
 * main entry point imports as always, and `/agents` fails with an error that
 * says what to install. Prints one JSON line for the pack test.
 */
const main = await import("langgraph-trustworthy-output");
let agents = "loaded";
try {
  await import("langgraph-trustworthy-output/agents");
} catch (error) {
  agents = { name: error.name, message: error.message };
}
console.log(JSON.stringify({ main: typeof main.buildValidationGraph, agents }));
