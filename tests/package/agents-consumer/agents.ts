/**
 * Consumer fixture: the `/agents` entry point's declarations, compiled by the
 * pack test's strict `tsc --noEmit` in a project with `langchain` installed.
 * A zod spec types the agent's outcome.
 */
import { fakeModel } from "@langchain/core/testing";
import { createAgent } from "langchain";
import { z } from "zod";
import { defineSpec } from "langgraph-trustworthy-output";
import { guardToolsMiddleware, validatedResponseMiddleware, type ResponseOutcome } from "langgraph-trustworthy-output/agents";

const Window = z.object({ start: z.number().int(), end: z.number().int(), label: z.string().default("window") });
const windowSpec = defineSpec({ name: "window", description: "A time window.", schema: Window });

export async function windowLabel(): Promise<string | null> {
  const agent = createAgent({
    model: fakeModel(),
    tools: [],
    middleware: [validatedResponseMiddleware({ spec: windowSpec, maxAttempts: 2, onFailure: "end" })],
  });
  const out = await agent.invoke({ messages: [{ role: "user", content: "a window" }] });
  const outcome: ResponseOutcome<z.output<typeof Window>> | null = out.responseOutcome;
  if (!outcome?.success) return null;
  // @ts-expect-error the value is typed from the zod schema: there is no field `duration`
  void outcome.value.duration;
  return outcome.value.label;
}

// @ts-expect-error onFailure is "end" or "interrupt"
validatedResponseMiddleware({ spec: windowSpec, onFailure: "retry" });
void guardToolsMiddleware({ tools: { deploy_service: "deployment-config" }, maxAttempts: 3 });
