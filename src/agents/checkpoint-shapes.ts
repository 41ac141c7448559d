/**
 * Values a LangGraph checkpoint would not keep as given. Its serializer
 * (`@langchain/langgraph-checkpoint`, serde/jsonplus) writes plain objects as
 * they are, but on loading it revives objects shaped like its own records:
 * `{"lc": 2, "type": "undefined"}` comes back as undefined (the field is gone),
 * `{"lc": 2, "type": "constructor", …}` as a Set, Map or Error, and
 * `{"lc": 1, "type": "constructor", "id": […], …}` as a LangChain object. A
 * model or a person can write those shapes too, so an answer holding one would
 * be read back from the thread as another value than the one judged. Any
 * object with `lc` 1 or 2 and a string `type` is treated as such a record,
 * a little wider than the serializer's exact list, so a later record kind
 * is covered as well. Pure: no LangGraph import.
 */
import { pathOf } from "../shared/paths.js";

interface Frame {
  value: unknown;
  key: string | number;
  parent: Frame | undefined;
}

/** The first record-shaped object in a JSON value, as a message naming its path; null when there is none. */
export function checkpointRecordIn(value: unknown): string | null {
  const stack: Frame[] = [{ value, key: 0, parent: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: i, parent: frame });
      continue;
    }
    const record = v as Record<string, unknown>;
    if ((record.lc === 1 || record.lc === 2) && typeof record.type === "string") {
      const where = frame.parent === undefined ? "the answer" : pathOf(pathTo(frame));
      return `${where} is {"lc":${record.lc},"type":${JSON.stringify(record.type.slice(0, 40))}}, the shape of a record of LangGraph's checkpoint store, which would read it back as another value; give it another shape (rename "lc" or "type")`;
    }
    const keys = Object.keys(record);
    for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: record[keys[i]], key: keys[i], parent: frame });
  }
  return null;
}

/** A frame's path from the root (built only for a message). */
function pathTo(frame: Frame): Array<string | number> {
  const path: Array<string | number> = [];
  for (let f: Frame | undefined = frame; f?.parent !== undefined; f = f.parent) path.push(f.key);
  return path.reverse();
}
