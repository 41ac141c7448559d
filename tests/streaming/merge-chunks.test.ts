/**
 * A streamed answer's chunks are merged once, at the end (src/providers/message-chunks.ts):
 * the message is the one the `.concat` chain gives, every field alike, for
 * seeded random streams of text, content parts, tool-call chunks, usage,
 * response metadata and ids; and the merge builds one message, not one per chunk.
 */
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { AIMessageChunk, HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { mergeChunks } from "../../src/providers/message-chunks.js";
import { callModel } from "../../src/providers/model-call.js";
import { seededRandom } from "../../testkit/random.js";

type Random = () => number;
const pick = <T>(random: Random, list: readonly T[]): T => list[Math.floor(random() * list.length)];

/** One chunk as providers' clients write them: text or parts, tool-call pieces, metadata on some, usage at the end. */
function randomChunk(random: Random, k: number, last: boolean, style: "text" | "parts" | "tools" | "mixed"): AIMessageChunk {
  const text = pick(random, ["", "{", '"a"', ": 1", "}", " ", "é", "```", "\n"]);
  const fields: Record<string, unknown> = { content: text };
  if (style === "parts" || (style === "mixed" && random() < 0.2)) fields.content = text === "" ? [] : [{ type: "text", text, index: 0 }];
  if (style === "tools" || (style === "mixed" && random() < 0.3)) {
    const index = pick(random, [0, 0, 0, 1]);
    fields.tool_call_chunks = [
      {
        type: "tool_call_chunk",
        index,
        args: pick(random, ['{"a"', ": 1", "}", ""]),
        ...(k === 0 || random() < 0.05 ? { id: `call_${index}`, name: "answer" } : {}),
      },
    ];
    if (style === "tools") fields.content = "";
  }
  if (random() < 0.5)
    fields.response_metadata = {
      model_provider: "openai",
      ...(random() < 0.3 ? { system_fingerprint: "fp" } : {}),
      ...(last ? { finish_reason: "stop", model_name: "m" } : {}),
    };
  if (random() < 0.2) fields.additional_kwargs = random() < 0.5 ? { refusal: pick(random, ["no", " way"]) } : {};
  if (k === 0 || random() < 0.1) fields.id = random() < 0.8 ? "chatcmpl-1" : undefined;
  if (last || random() < 0.02)
    fields.usage_metadata = { input_tokens: 10, output_tokens: k, total_tokens: 10 + k, ...(random() < 0.5 ? { output_token_details: { reasoning: 2 } } : {}) };
  return new AIMessageChunk(fields as ConstructorParameters<typeof AIMessageChunk>[0]);
}

/** Everything a caller can read of a message. */
function fieldsOf(message: AIMessageChunk) {
  return {
    class: message.constructor.name,
    content: message.content,
    additional_kwargs: message.additional_kwargs,
    response_metadata: message.response_metadata,
    tool_call_chunks: message.tool_call_chunks,
    tool_calls: message.tool_calls,
    invalid_tool_calls: message.invalid_tool_calls,
    usage_metadata: message.usage_metadata,
    id: message.id,
    json: JSON.stringify(message.toJSON()),
  };
}

describe("merging a streamed answer's chunks", () => {
  it("gives the message the .concat chain gives, every field alike, for seeded random streams", () => {
    const random = seededRandom(31);
    let compared = 0;
    for (const style of ["text", "parts", "tools", "mixed"] as const) {
      for (let n = 0; n < 60; n++) {
        const length = 1 + Math.floor(random() * 40);
        const chunks = Array.from({ length }, (_, k) => randomChunk(random, k, k === length - 1, style));
        const chained = chunks.reduce((merged, chunk) => merged.concat(chunk));
        expect(fieldsOf(mergeChunks(chunks)!)).toEqual(fieldsOf(chained));
        compared++;
      }
    }
    expect(compared).toBe(240);
    expect(mergeChunks([])).toBeUndefined();
  });

  class Counted extends AIMessageChunk {
    static built = 0;
    constructor(fields: ConstructorParameters<typeof AIMessageChunk>[0]) {
      super(fields);
      Counted.built++;
    }
  }

  it("a watched model call builds its answer once, not a message per chunk", async () => {
    const pieces = Array.from({ length: 500 }, (_, k) => (k === 0 ? "{" : k === 499 ? "}" : " "));
    // A model whose stream hands over the chunks as they are (no merging of its own on the way).
    class PassThrough extends FakeListChatModel {
      override async *_streamIterator(): AsyncGenerator<AIMessageChunk> {
        for (const text of pieces) yield new Counted({ content: text });
      }
    }
    const model = new PassThrough({ responses: [""] });
    let seen = 0;
    Counted.built = 0;
    const answer = await callModel(model, [new HumanMessage("hi")], { node: "generate", watch: { onChunk: () => seen++, stop: new AbortController().signal } });
    expect(answer.text).toBe(pieces.join(""));
    expect(seen).toBe(500);
    expect(Counted.built).toBe(500 + 1);
  });

  it("builds one message, however many chunks", () => {
    const chunks = Array.from({ length: 1_000 }, () => new Counted({ content: "x" }));
    Counted.built = 0;
    const merged = mergeChunks(chunks)!;
    expect(merged.content).toBe("x".repeat(1_000));
    expect(merged).toBeInstanceOf(Counted);
    expect(Counted.built).toBe(1);
  });
});
