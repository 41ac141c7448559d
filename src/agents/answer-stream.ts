/**
 * The agent's answer read as it arrives: the answer tool call's arguments, streamed in pieces by the
 * provider, go through the partial checks (../streaming/attempt.ts, the validation graph's own), so each
 * field is checked as it closes, progress is published on LangGraph's `custom` stream in the validation
 * graph's event shape, and the stop policy may end a request whose rest cannot make the answer valid.
 *
 * It is a callback handler on the model call: preferring streaming, it makes a chat model stream (as
 * LangGraph's `messages` mode does), and it reads each chunk's `tool_call_chunks` for the answer tool's
 * call (the first one, by its index). The verdict stays the check step's, on the whole answer.
 */
import { BaseCallbackHandler, type HandleLLMNewTokenCallbackFields } from "@langchain/core/callbacks/base";
import type { AttemptWatch } from "../streaming/attempt.js";

type CallWatch = ReturnType<AttemptWatch["start"]>;

export class AnswerStreamReader extends BaseCallbackHandler {
  name = "AnswerStreamReader";
  /** Makes the chat model stream its answer, as a LangGraph run in `messages` mode does. */
  lc_prefer_streaming = true;
  /** The arguments' text received, for the retry prompt of an answer stopped early. */
  text = "";
  #run: string | undefined;
  #index: number | undefined;
  #call: CallWatch | undefined;

  /** `stop` is aborted when the stop policy ends the request (the model call is made with its signal). */
  constructor(
    private readonly watch: AttemptWatch,
    private readonly tool: string,
    private readonly stop: AbortController,
  ) {
    super({ _awaitHandler: true });
  }

  // A call made again (a retry inside the handler) starts afresh: the answer is the last call's.
  override handleChatModelStart(_model: unknown, _messages: unknown, runId: string): void {
    this.#run = runId;
    this.#index = undefined;
    this.text = "";
    const call = this.watch.start();
    this.#call = call;
    if (call.stop.aborted) this.stop.abort(call.stop.reason);
    else call.stop.addEventListener("abort", () => this.stop.abort(call.stop.reason), { once: true });
  }

  override handleLLMNewToken(_token: string, _idx: unknown, runId: string, _parent?: string, _tags?: string[], fields?: HandleLLMNewTokenCallbackFields): void {
    if (runId !== this.#run || this.#call === undefined) return;
    const message = (fields?.chunk as { message?: { tool_call_chunks?: Array<{ name?: string; args?: string; index?: number }> } } | undefined)?.message;
    for (const piece of message?.tool_call_chunks ?? []) {
      const index = piece.index ?? 0;
      if (this.#index === undefined && piece.name === this.tool) this.#index = index;
      if (this.#index !== index || typeof piece.args !== "string" || piece.args.length === 0) continue;
      this.text += piece.args;
      this.#call.write(piece.args);
    }
  }
}
