/**
 * Consumer fixture in a CommonJS project: require() of either entry point fails with one line saying what to
 * do; import() loads the package. Prints one JSON line for the pack test.
 */
const failure = (specifier) => {
  try {
    require(specifier);
    return "loaded";
  } catch (error) {
    return error.message;
  }
};
const required = failure("langgraph-trustworthy-output");
const agents = failure("langgraph-trustworthy-output/agents");
import("langgraph-trustworthy-output").then((main) => console.log(JSON.stringify({ required, agents, imported: typeof main.generateValidated })));
