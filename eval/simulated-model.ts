/**
 * The evaluation's simulated model: the package's built-in one (src/simulated/model.ts, where its rules are),
 * knowing the evaluation suite's requests (their spec and difficulty) unless told otherwise.
 */
import {
  SimulatedChatModel as BuiltinSimulatedChatModel,
  simulatedModelSource as builtinModelSource,
  tieredModelSource as builtinTieredSource,
  type SimulatedModelOptions,
  type SimulatedRole,
} from "../src/simulated/model.js";
import { SUITE } from "./suite.js";

export * from "../src/simulated/model.js";

export class SimulatedChatModel extends BuiltinSimulatedChatModel {
  constructor(options: SimulatedModelOptions, role?: SimulatedRole) {
    super({ suite: SUITE, ...options }, role);
  }
}

export function simulatedModelSource(options: SimulatedModelOptions): ReturnType<typeof builtinModelSource> {
  return builtinModelSource({ suite: SUITE, ...options });
}

/** The "small" and "large" simulated models by name (SIMULATED_TIERS), knowing the suite. */
export function tieredModelSource(options: SimulatedModelOptions): ReturnType<typeof builtinTieredSource> {
  return builtinTieredSource({ suite: SUITE, ...options });
}
