/** The seeded PRNG of tests and benchmarks: the package's own (src/simulated/random.ts), so the simulated model and the tests share one. */
export { seededRandom } from "../src/simulated/random.js";
