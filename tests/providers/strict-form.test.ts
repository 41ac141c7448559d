/**
 * The strict form of a spec's schema in OpenAI's dialect: what is sent (every property required, optional ones nullable
 * unless the spec allows null, every object closed, what strict mode does not take left out and listed), the
 * preflight against each documented limit, and the answer mapped back before the check step judges it whole
 * against the real spec: an introduced null removed, a null the spec allows kept, a required field's null refused.
 * Then in Anthropic's dialect (optional properties stay optional): a wrapped root, a root $ref, maps, and hostile
 * answers to the wrapper.
 */
import { describe, expect, it } from "vitest";
import { checkText } from "../../src/specs/check.js";
import { defineSpec, type Spec } from "../../src/specs/spec.js";
import { generateValidated } from "../../src/validation/generate.js";
import { jsonSchemaRequest } from "../../src/validation/output-mode.js";
import { MODEL_PROVIDERS } from "../../src/providers/index.js";
import { limitsOf } from "../../src/providers/provider.js";
import { mapBackStrictAnswer, strictForm, strictLimitProblem, type StrictForm } from "../../src/providers/strict-form.js";
import { ScriptedChatModel } from "../../testkit/scripted-model.js";

/** OpenAI's strict dialect: every property required. */
const OPENAI = MODEL_PROVIDERS.openai.strictDialect!;

/** A contact: `name` required, `nickname` optional (not nullable), `phone` optional and nullable in the spec. */
const CONTACT = {
  type: "object",
  required: ["name"],
  properties: {
    name: { type: "string", minLength: 1 },
    nickname: { type: "string" },
    phone: { type: ["string", "null"] },
    tags: { type: "array", items: { type: "string" }, uniqueItems: true },
  },
};
const contactSpec = () => defineSpec({ name: "contact", description: "A contact", schema: CONTACT });

function strictOf(schema: Record<string, unknown>): Extract<StrictForm, { strict: true }> {
  const form = strictForm(schema, OPENAI);
  if (!form.strict) throw new Error(`no strict form: ${form.reason}`);
  return form;
}

describe("the strict form of a schema", () => {
  it("makes every property required, the optional ones nullable unless the spec allows null, every object closed", () => {
    const form = strictOf(CONTACT);
    expect(form.schema).toEqual({
      type: "object",
      properties: {
        name: { type: "string" },
        nickname: { anyOf: [{ type: "string" }, { type: "null" }] },
        phone: { type: ["string", "null"] },
        tags: { anyOf: [{ type: "array", items: { type: "string" } }, { type: "null" }] },
      },
      required: ["name", "nickname", "phone", "tags"],
      additionalProperties: false,
    });
    expect(form.dropped).toEqual(["/properties/name: minLength", "/properties/tags: uniqueItems"]);
    expect(form.wrapped).toBe(false);
  });

  it("leaves out and lists what strict mode does not take; oneOf is sent as anyOf; $ref, $defs and recursion are kept", () => {
    const form = strictOf({
      type: "object",
      required: ["kind"],
      properties: {
        kind: { type: "string", enum: ["a", "b"] },
        node: { $ref: "#/$defs/node" },
        when: { type: "string", format: "date-time" },
        odd: { type: "string", format: "idn-email" },
        choice: { oneOf: [{ type: "integer" }, { type: "string" }] },
        extra: { type: "object", properties: { a: { type: "number" } }, patternProperties: { "^x": { type: "string" } }, minProperties: 1 },
      },
      allOf: [{ required: ["node"] }],
      not: { required: ["odd"] },
      if: { properties: { kind: { const: "a" } } },
      then: { required: ["when"] },
      else: { required: ["choice"] },
      dependentRequired: { when: ["kind"] },
      dependentSchemas: { when: { required: ["kind"] } },
      $defs: { node: { type: "object", properties: { value: { type: "integer" }, next: { $ref: "#/$defs/node" } }, required: ["value"] } },
    });
    expect(form.dropped).toEqual([
      "/: allOf",
      "/: not",
      "/: if",
      "/: then",
      "/: else",
      "/: dependentRequired",
      "/: dependentSchemas",
      "/properties/odd: format",
      "/properties/extra: patternProperties",
      "/properties/extra: minProperties",
    ]);
    const properties = form.schema.properties as Record<string, unknown>;
    expect(properties.node).toEqual({ anyOf: [{ $ref: "#/$defs/node" }, { type: "null" }] });
    expect(properties.choice).toEqual({ anyOf: [{ type: "integer" }, { type: "string" }, { type: "null" }] }); // oneOf as anyOf; a union of non-null types made nullable
    expect((form.schema.$defs as Record<string, unknown>).node).toEqual({
      type: "object",
      properties: { value: { type: "integer" }, next: { anyOf: [{ $ref: "#/$defs/node" }, { type: "null" }] } },
      required: ["value", "next"],
      additionalProperties: false,
    });
  });

  it("a root that is not one object is wrapped in {value: …}; a root $ref is its definition; a $ref strict mode cannot follow means no strict form", () => {
    const union = strictOf({ anyOf: [{ type: "object", properties: { a: { type: "string" } } }, { type: "string" }] });
    expect(union.wrapped).toBe(true);
    expect(union.schema).toMatchObject({ type: "object", required: ["value"], additionalProperties: false });
    const referred = strictOf({
      $ref: "#/definitions/Main",
      definitions: { Main: { type: "object", properties: { a: { type: "string" } }, required: ["a"] } },
    });
    expect(referred.wrapped).toBe(false);
    expect(referred.schema).toMatchObject({ type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: false });
    const form = strictForm({ type: "object", properties: { a: { $ref: "#/properties/b" }, b: { type: "string" } } }, OPENAI);
    expect(form).toEqual({ strict: false, reason: '/properties/a refers to "#/properties/b"; strict mode follows only "#" and "#/$defs/…"' });
  });
});

describe("maps and free-form objects: asked for as an array of entries, read back as the object", () => {
  const entriesOf = (value: unknown, bounds: Record<string, number> = {}) => ({
    type: "array",
    items: { type: "object", properties: { key: { type: "string" }, value }, required: ["key", "value"], additionalProperties: false },
    ...bounds,
  });
  /** Headers: a map of strings with at least one entry; labels: a map of maps of integers (optional). */
  const HEADERS = {
    type: "object",
    required: ["headers"],
    properties: {
      headers: { type: "object", additionalProperties: { type: "string", minLength: 1 }, minProperties: 1 },
      labels: { type: "object", additionalProperties: { type: "object", additionalProperties: { type: "integer" } } },
    },
  };
  const headersSpec = () => defineSpec({ name: "headers", description: "Request headers", schema: HEADERS });
  const mapBackOf = (schema: Record<string, unknown>) => {
    const form = strictOf(schema);
    return (value: unknown) => mapBackStrictAnswer(value, form);
  };

  it("a map, and a map of maps: entries of {key, value} with the value's strict form; minProperties and maxProperties as the array's bounds", () => {
    const form = strictOf(HEADERS);
    expect(form.schema).toEqual({
      type: "object",
      properties: {
        headers: entriesOf({ type: "string" }, { minItems: 1 }),
        labels: { anyOf: [entriesOf(entriesOf({ type: "integer" })), { type: "null" }] },
      },
      required: ["headers", "labels"],
      additionalProperties: false,
    });
    expect(form.dropped).toEqual(["/properties/headers/additionalProperties: minLength"]);
    expect(form.reshapes).toBe(true);
  });

  it("a free-form object is a map of any value; patternProperties give the value schema when only one may apply; a map at the root is wrapped", () => {
    const free = strictOf({ type: "object", properties: { meta: { type: "object", maxProperties: 3 } }, required: ["meta"] });
    expect((free.schema.properties as Record<string, unknown>).meta).toEqual(entriesOf(expect.objectContaining({ anyOf: expect.any(Array) }), { maxItems: 3 }));
    const patterned = strictOf({
      type: "object",
      properties: { ext: { type: "object", patternProperties: { "^x-": { type: "string" } }, additionalProperties: false } },
      required: ["ext"],
    });
    expect((patterned.schema.properties as Record<string, unknown>).ext).toEqual(entriesOf({ type: "string" }));
    const two = strictOf({ type: "object", properties: { ext: { type: "object", patternProperties: { "^x-": { type: "string" } } } }, required: ["ext"] });
    expect((two.schema.properties as Record<string, unknown>).ext).toEqual(entriesOf(expect.objectContaining({ anyOf: expect.any(Array) })));
    // Properties without a type, none of them listed: a map too, never a closed empty object.
    const untyped = strictOf({ type: "object", properties: { m: { properties: {}, additionalProperties: { type: "string" } } }, required: ["m"] });
    expect((untyped.schema.properties as Record<string, unknown>).m).toEqual(entriesOf({ type: "string" }));
    const root = strictOf({ type: "object", additionalProperties: { type: "number" } });
    expect(root.wrapped).toBe(true);
    expect(root.schema).toEqual({ type: "object", properties: { value: entriesOf({ type: "number" }) }, required: ["value"], additionalProperties: false });
  });

  it("a map that may also be an array is not sent strict: an array of entries could not be told from it", () => {
    for (const schema of [{ type: ["object", "array"] }, { anyOf: [{ type: "object", additionalProperties: { type: "string" } }, { type: "array" }] }]) {
      const form = strictForm({ type: "object", properties: { m: schema }, required: ["m"] }, OPENAI);
      expect(form).toEqual({ strict: false, reason: "/properties/m may be a map or an array, which strict mode's array of entries could not tell apart" });
    }
    // Beside another type that is not an array, the map is a branch of its own.
    const nullable = strictOf({ type: "object", properties: { m: { type: ["object", "null"], additionalProperties: { type: "string" } } }, required: ["m"] });
    expect((nullable.schema.properties as Record<string, unknown>).m).toEqual({ anyOf: [entriesOf({ type: "string" }), { type: "null" }] });
  });

  it("an object with properties of its own is closed: the model writes those, and may not add others", () => {
    const form = strictForm({ type: "object", properties: { name: { type: "string" } }, required: ["name"], additionalProperties: { type: "string" } }, OPENAI);
    expect(form.strict).toBe(true);
    expect(form.strict && form.schema).toMatchObject({ properties: { name: { type: "string" } }, required: ["name"], additionalProperties: false });
  });

  it("entries are read as the object (maps of maps too), judged whole, and the object is the value returned", async () => {
    const verdict = await checkText(
      headersSpec(),
      '{"headers": [{"key": "accept", "value": "json"}, {"key": "x-id", "value": "7"}], "labels": [{"key": "team", "value": [{"key": "size", "value": 4}]}]}',
      "model",
      { mapBack: mapBackOf(HEADERS) },
    );
    expect(verdict).toMatchObject({ valid: true, value: { headers: { accept: "json", "x-id": "7" }, labels: { team: { size: 4 } } } });
    expect(verdict.mappedBack).toEqual([
      "/headers: entries [ … ] read as an object",
      "/labels: entries [ … ] read as an object",
      "/labels/team: entries [ … ] read as an object",
    ]);
    expect(verdict.parsed).toBe(verdict.value);
    expect(Object.getPrototypeOf(verdict.value)).toBe(Object.prototype);
  });

  it("the validator judges the mapped value against the whole spec: minProperties, and the value's own keywords", async () => {
    const mapBack = mapBackOf(HEADERS);
    const empty = await checkText(headersSpec(), '{"headers": [], "labels": null}', "model", { mapBack });
    expect(empty.valid).toBe(false);
    expect(empty.errors).toEqual([expect.stringMatching(/^headers .*(fewer than 1|at least 1)/)]);
    expect(empty.parsed).toEqual({ headers: {} });
    const blank = await checkText(headersSpec(), '{"headers": [{"key": "accept", "value": ""}], "labels": null}', "model", { mapBack });
    expect(blank.errors).toEqual([expect.stringMatching(/^headers\.accept /)]);
  });

  it("a key written twice is refused, never merged", async () => {
    const verdict = await checkText(
      headersSpec(),
      '{"headers": [{"key": "accept", "value": "json"}, {"key": "accept", "value": "xml"}], "labels": null}',
      "model",
      { mapBack: mapBackOf(HEADERS) },
    );
    expect(verdict).toMatchObject({
      valid: false,
      errors: ['The answer names the key "accept" twice among the entries of headers; each key may appear only once.'],
    });
    expect(verdict.value).toBeUndefined();
    expect(verdict.parsed).toBeUndefined();
    // In a list of maps, the message names the map's place.
    const form = strictOf({
      type: "object",
      properties: { rows: { type: "array", items: { type: "object", additionalProperties: { type: "integer" } } } },
      required: ["rows"],
    });
    const rows = JSON.parse('{"rows": [[{"key": "a", "value": 1}], [{"key": "b", "value": 1}, {"key": "b", "value": 2}]]}');
    expect(mapBackStrictAnswer(rows, form).problem).toBe('The answer names the key "b" twice among the entries of rows[1]; each key may appear only once.');
  });

  it("a key the reader refuses (__proto__, a checkpoint marker's fields) reaches the check step as a field and is refused with the reader's hint", async () => {
    const mapBack = mapBackOf(HEADERS);
    const proto = await checkText(headersSpec(), '{"headers": [{"key": "__proto__", "value": "x"}], "labels": null}', "model", { mapBack });
    expect(proto).toMatchObject({
      valid: false,
      errors: [expect.stringMatching(/^The JSON cannot be kept as written: headers has a field named "__proto__"/)],
    });
    const marker = await checkText(
      headersSpec(),
      '{"headers": [{"key": "accept", "value": "json"}], "labels": [{"key": "x", "value": [{"key": "lc", "value": 1}, {"key": "type", "value": 2}]}]}',
      "model",
      { mapBack },
    );
    expect(marker.valid).toBe(true); // "type" is a number here: no marker's shape
    const form = strictOf({ type: "object", properties: { m: { type: "object" } }, required: ["m"] });
    const shaped = await checkText(
      defineSpec({ name: "free", description: "", schema: { type: "object", properties: { m: { type: "object" } }, required: ["m"] } }),
      '{"m": [{"key": "lc", "value": 1}, {"key": "type", "value": "constructor"}]}',
      "model",
      { mapBack: (value) => mapBackStrictAnswer(value, form) },
    );
    expect(shaped.errors).toEqual([expect.stringMatching(/^The JSON cannot be kept as written: m has the fields "lc" and "type"/)]);
  });

  it("through the validation graph: asked as entries with strict: true; the object is judged, returned and kept", async () => {
    const model = new ScriptedChatModel({
      answers: [
        '{"headers": [{"key": "accept", "value": "json"}, {"key": "accept", "value": "xml"}], "labels": null}',
        '{"headers": [{"key": "accept", "value": "json"}], "labels": null}',
      ],
    });
    const outcome = await generateValidated({ model, spec: headersSpec(), request: "headers", outputMode: "json_schema", maxAttempts: 2 });
    const options = model.calls[0].options as { strict?: boolean; response_format?: { json_schema?: { schema?: unknown } } };
    expect(options.strict).toBe(true);
    expect(options.response_format?.json_schema?.schema).toEqual(strictOf(HEADERS).schema);
    expect(outcome.history[0].errors).toEqual(['The answer names the key "accept" twice among the entries of headers; each key may appear only once.']);
    expect(outcome).toMatchObject({ success: true, attempts: 2, value: { headers: { accept: "json" } } });
    expect(outcome.history[1]).toMatchObject({
      valid: true,
      mappedBack: ["/headers: entries [ … ] read as an object", "/labels: null removed (the field left out)"],
    });
  });
});

describe("the preflight: each of OpenAI's documented strict limits, checked before the call", () => {
  const L = limitsOf(MODEL_PROVIDERS.openai)!;
  const withinLimits = (schema: Record<string, unknown>): StrictForm => {
    const form = strictForm(schema, OPENAI);
    const over = form.strict ? strictLimitProblem(form.schema, L) : undefined;
    return over === undefined ? form : { strict: false, reason: over };
  };
  const objectWith = (n: number, name = (i: number) => `p${i}`) => ({
    type: "object",
    properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [name(i), { type: "integer" }])),
    required: Array.from({ length: n }, (_, i) => name(i)),
  });
  const nested = (levels: number): Record<string, unknown> =>
    levels === 1
      ? { type: "object", properties: { leaf: { type: "string" } }, required: ["leaf"] }
      : { type: "object", properties: { inner: nested(levels - 1) }, required: ["inner"] };
  const enumOf = (values: string[]) => ({ type: "object", properties: { pick: { type: "string", enum: values } }, required: ["pick"] });
  const cases: Array<[string, (n: number) => Record<string, unknown>, number, RegExp]> = [
    ["properties", (n) => objectWith(n), L.properties, /has 5,001 properties, over OpenAI's strict limit of 5,000/],
    ["nesting", (n) => nested(n), L.nesting, /nests objects 11 levels deep, over OpenAI's strict limit of 10/],
    ["enum values", (n) => enumOf(Array.from({ length: n }, (_, i) => `v${i}`)), L.enumValues, /has 1,001 enum values, over OpenAI's strict limit of 1,000/],
    [
      "characters of names, enum values and consts",
      // 100 properties with names of 1,200 characters: 120,000 at the limit.
      (n) => objectWith(100, (i) => `${String(i).padStart(3, "0")}${"x".repeat(n / 100 - 3)}`),
      L.chars,
      /come to 120,100 characters, over OpenAI's strict limit of 120,000/,
    ],
    [
      "characters of one enum of more than 250 values",
      (n) => enumOf(Array.from({ length: 300 }, (_, i) => `${String(i).padStart(3, "0")}${"y".repeat(n / 300 - 3)}`)),
      15_000,
      /has 300 enum values of 15,300 characters in all, over OpenAI's strict limit of 15,000 characters for an enum of more than 250 values/,
    ],
  ];
  it.each(cases)("%s: at the limit strict, one past it sent without strict, saying why", (_what, schemaFor, limit, message) => {
    expect(withinLimits(schemaFor(limit)).strict).toBe(true);
    const past = schemaFor(limit === L.chars ? limit + 100 : limit === 15_000 ? limit + 300 : limit + 1);
    const form = withinLimits(past);
    expect(form.strict).toBe(false);
    expect(!form.strict && form.reason).toMatch(message);
    // The request as it is built from a spec (a spec this size is not compiled here: only what is sent is asserted).
    const request = jsonSchemaRequest({ name: "big", description: "", schema: past } as unknown as Spec);
    expect(request.options).toMatchObject({ strict: false, response_format: { json_schema: { strict: false, schema: past } } });
    expect(request.notStrict).toMatch(message);
  });
});

describe("the answer mapped back, then judged whole against the real spec by the check step", () => {
  it("an introduced null is removed, a null the spec allows kept; the value judged is the value returned", async () => {
    const spec = contactSpec();
    const form = strictOf(spec.schema);
    const verdict = await checkText(spec, '{"name": "Ada", "nickname": null, "phone": null, "tags": null}', "model", {
      mapBack: (value) => mapBackStrictAnswer(value, form),
    });
    expect(verdict).toMatchObject({
      valid: true,
      value: { name: "Ada", phone: null },
      mappedBack: ["/nickname: null removed (the field left out)", "/tags: null removed (the field left out)"],
    });
    expect(verdict.parsed).toBe(verdict.value);
    expect(Object.isFrozen(verdict.value)).toBe(true);
  });

  it("a required field answered null is refused; the exact reader (a person, a tool's arguments) is never mapped", async () => {
    const spec = contactSpec();
    const form = strictOf(spec.schema);
    const mapBack = (value: unknown) => mapBackStrictAnswer(value, form);
    const required = await checkText(spec, '{"name": null, "nickname": null, "phone": null, "tags": null}', "model", { mapBack });
    expect(required.valid).toBe(false);
    expect(required.errors).toEqual([expect.stringMatching(/^name .*string/)]);
    expect(required.parsed).toEqual({ name: null, phone: null });
    const person = await checkText(spec, '{"name": "Ada", "nickname": null}', "exact", { mapBack });
    expect(person.valid).toBe(false);
    expect(person.mappedBack).toBeUndefined();
  });

  it("an optional field whose schema allows null without saying so (no type) is sent nullable, and its null kept", async () => {
    const spec = defineSpec({ name: "loose", description: "", schema: { type: "object", properties: { meta: { properties: { a: { type: "integer" } } } } } });
    const form = strictOf(spec.schema);
    expect((form.schema.properties as Record<string, unknown>).meta).toEqual({
      anyOf: [
        { type: "object", properties: { a: { anyOf: [{ type: "integer" }, { type: "null" }] } }, required: ["a"], additionalProperties: false },
        { type: "null" },
      ],
    });
    const verdict = await checkText(spec, '{"meta": null}', "model", { mapBack: (value) => mapBackStrictAnswer(value, form) });
    expect(verdict).toMatchObject({ valid: true, value: { meta: null } });
    expect(verdict.mappedBack).toBeUndefined();
  });

  it("a wrapped root is unwrapped; nulls inside $ref'd, recursive definitions are mapped too", async () => {
    const schema = {
      anyOf: [{ $ref: "#/$defs/list" }, { type: "string" }],
      $defs: { list: { type: "object", properties: { head: { type: "integer" }, tail: { $ref: "#/$defs/list" } }, required: ["head"] } },
    };
    const spec = defineSpec({ name: "list", description: "", schema });
    const form = strictOf(spec.schema);
    const verdict = await checkText(spec, '{"value": {"head": 1, "tail": {"head": 2, "tail": null}}}', "model", {
      mapBack: (value) => mapBackStrictAnswer(value, form),
    });
    expect(verdict).toMatchObject({ valid: true, value: { head: 1, tail: { head: 2 } } });
    expect(verdict.mappedBack).toEqual(['the answer unwrapped from {"value": …}', "/tail/tail: null removed (the field left out)"]);
  });
});

describe("through the validation graph with a scripted model (json_schema)", () => {
  it("asks with strict: true and the strict form; an answer with introduced nulls is judged and kept as the spec's own value", async () => {
    const model = new ScriptedChatModel({
      answers: ['{"name": null, "nickname": null, "phone": null, "tags": null}', '{"name": "Ada", "nickname": null, "phone": null, "tags": ["x"]}'],
    });
    const outcome = await generateValidated({ model, spec: contactSpec(), request: "a contact", outputMode: "json_schema", maxAttempts: 2 });
    const options = model.calls[0].options as { strict?: boolean; response_format?: { json_schema?: { strict?: boolean; schema?: unknown } } };
    expect(options.strict).toBe(true);
    expect(options.response_format?.json_schema).toMatchObject({ strict: true, schema: strictOf(CONTACT).schema });
    // The required field's null is refused; the introduced nulls of the retry are removed, the spec's own null kept.
    expect(outcome.history[0]).toMatchObject({
      valid: false,
      mappedBack: ["/nickname: null removed (the field left out)", "/tags: null removed (the field left out)"],
    });
    expect(outcome.history[0].errors).toEqual([expect.stringMatching(/^name /)]);
    expect(outcome).toMatchObject({ success: true, attempts: 2, value: { name: "Ada", phone: null, tags: ["x"] } });
    expect(outcome.history[1]).toMatchObject({
      valid: true,
      mappedBack: ["/nickname: null removed (the field left out)"],
      schemaDropped: ["/properties/name: minLength", "/properties/tags: uniqueItems"],
    });
    expect(outcome.history[1].notStrict).toBeUndefined();
  });

  it("a schema with no strict form is sent without strict, the attempt saying why; its nulls are judged as written", async () => {
    const schema = { type: "object", properties: { a: { $ref: "#/properties/b" }, b: { type: "string" } } };
    const model = new ScriptedChatModel({ answers: ['{"b": null}'] });
    const outcome = await generateValidated({
      model,
      spec: defineSpec({ name: "refs", description: "", schema }),
      request: "x",
      outputMode: "json_schema",
      maxAttempts: 1,
    });
    expect((model.calls[0].options as { strict?: boolean }).strict).toBe(false);
    expect(outcome.history[0]).toMatchObject({
      valid: false,
      notStrict: '/properties/a refers to "#/properties/b"; strict mode follows only "#" and "#/$defs/…"',
    });
    expect(outcome.history[0].mappedBack).toBeUndefined();
  });
});

describe("Anthropic's dialect: optional properties stay optional; a wrapped root, a root $ref and maps mapped back the same way", () => {
  const ANTHROPIC = MODEL_PROVIDERS.anthropic.strictDialect!;
  function anthropicOf(schema: Record<string, unknown>): Extract<StrictForm, { strict: true }> {
    const form = strictForm(schema, ANTHROPIC);
    if (!form.strict) throw new Error(`no strict form: ${form.reason}`);
    return form;
  }
  const entriesOf = (value: unknown, bounds: Record<string, number> = {}) => ({
    type: "array",
    items: { type: "object", properties: { key: { type: "string" }, value }, required: ["key", "value"], additionalProperties: false },
    ...bounds,
  });
  const mapBackIn = (schema: Record<string, unknown>) => {
    const form = anthropicOf(schema);
    return (value: unknown) => mapBackStrictAnswer(value, form);
  };

  it("keeps optional properties optional (no null introduced), closes every object, and leaves out what Anthropic does not take", () => {
    const form = anthropicOf({
      ...CONTACT,
      properties: {
        ...CONTACT.properties,
        site: { type: "string", format: "uri" },
        shape: { enum: [{ a: 1 }, "b"] },
        few: { type: "array", items: { type: "integer", minimum: 0 }, minItems: 1, maxItems: 3 },
        many: { type: "array", items: { type: "string" }, minItems: 2 },
      },
      allOf: [{ required: ["nickname"] }],
    });
    expect(form.schema).toEqual({
      type: "object",
      properties: {
        name: { type: "string" },
        nickname: { type: "string" },
        phone: { type: ["string", "null"] },
        tags: { type: "array", items: { type: "string" } },
        site: { type: "string", format: "uri" },
        shape: expect.objectContaining({ anyOf: expect.any(Array) }),
        few: { type: "array", items: { type: "integer" }, minItems: 1 },
        many: { type: "array", items: { type: "string" } },
      },
      required: ["name"],
      additionalProperties: false,
    });
    expect(form.dropped).toEqual([
      "/: allOf",
      "/properties/name: minLength",
      "/properties/tags: uniqueItems",
      "/properties/shape: enum",
      "/properties/few: maxItems",
      "/properties/few/items: minimum",
      "/properties/many: minItems",
    ]);
    expect(form).toMatchObject({ wrapped: false, reshapes: false });
  });

  it("a root that is not an object is wrapped; the answer is unwrapped, and that value is what the spec judges", async () => {
    const schema = { type: "array", items: { type: "string", minLength: 1 }, minItems: 1 };
    const form = anthropicOf(schema);
    expect(form.schema).toEqual({
      type: "object",
      properties: { value: { type: "array", items: { type: "string" }, minItems: 1 } },
      required: ["value"],
      additionalProperties: false,
    });
    expect(form).toMatchObject({ wrapped: true, reshapes: true });
    const spec = defineSpec({ name: "names", description: "", schema });
    const ok = await checkText(spec, '{"value": ["Ada"]}', "model", { mapBack: mapBackIn(schema) });
    expect(ok).toMatchObject({ valid: true, value: ["Ada"], mappedBack: ['the answer unwrapped from {"value": …}'] });
    expect(ok.parsed).toBe(ok.value);
    const blank = await checkText(spec, '{"value": [""]}', "model", { mapBack: mapBackIn(schema) });
    expect(blank).toMatchObject({ valid: false, mappedBack: ['the answer unwrapped from {"value": …}'] });
  });

  it("a hostile answer to the wrapper is refused, never judged as it came: other fields, no field, not an object", async () => {
    // A union root that takes objects: a wrapper with an extra field would pass as one of its objects if judged as it came.
    const schema = { anyOf: [{ type: "object" }, { type: "string" }] };
    const spec = defineSpec({ name: "either", description: "", schema });
    const asked = 'The answer was asked for as {"value": …}, one object whose only field "value" holds the value';
    const cases: Array<[string, string]> = [
      ['{"value": "x", "extra": 1}', `${asked}, and it has other fields beside it ("extra").`],
      ['{"values": "x"}', `${asked}, and it has no field "value".`],
      ["{}", `${asked}, and it has no field "value".`],
      ['"x"', `${asked}, and it is not an object.`],
      ['[{"value": "x"}]', `${asked}, and it is not an object.`],
      ['{"value": 1, "a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6}', `${asked}, and it has other fields beside it ("a", "b", "c", "d", "e" and 1 more).`],
    ];
    for (const [answer, error] of cases) {
      const verdict = await checkText(spec, answer, "model", { mapBack: mapBackIn(schema) });
      expect(verdict, answer).toMatchObject({ valid: false, errors: [error] });
      expect(verdict.value).toBeUndefined();
    }
    // Without the mapping (an answer not asked in the strict form), the same text is the spec's own object.
    expect((await checkText(spec, '{"value": "x", "extra": 1}', "model")).valid).toBe(true);
    // OpenAI's dialect wraps the same way, and refuses the same way.
    expect(mapBackStrictAnswer({ value: "x", extra: 1 }, strictOf(schema)).problem).toBe(`${asked}, and it has other fields beside it ("extra").`);
  });

  it("a root that only refers to a definition is that definition, its $defs kept", () => {
    const form = anthropicOf({
      $ref: "#/definitions/Main",
      definitions: { Main: { type: "object", properties: { a: { type: "string" }, b: { $ref: "#/definitions/B" } }, required: ["a"] }, B: { type: "integer" } },
    });
    expect(form.wrapped).toBe(false);
    expect(form.schema).toMatchObject({
      type: "object",
      properties: { a: { type: "string" }, b: { $ref: "#/definitions/B" } },
      required: ["a"],
      additionalProperties: false,
      definitions: { B: { type: "integer" } },
    });
  });

  it("maps are entries; minProperties 0 or 1 is minItems, other bounds are left out and listed; the object read back is judged", async () => {
    const schema = {
      type: "object",
      properties: {
        labels: { type: "object", additionalProperties: { type: "string" }, minProperties: 1, maxProperties: 5 },
        sizes: { type: "object", additionalProperties: { type: "integer" }, minProperties: 2 },
      },
      required: ["labels"],
    };
    const form = anthropicOf(schema);
    expect(form.schema.properties).toEqual({ labels: entriesOf({ type: "string" }, { minItems: 1 }), sizes: entriesOf({ type: "integer" }) });
    expect(form.schema.required).toEqual(["labels"]);
    expect(form.dropped).toEqual(["/properties/labels: maxProperties", "/properties/sizes: minProperties"]);
    const spec = defineSpec({ name: "maps", description: "", schema });
    const one = await checkText(spec, '{"labels": [{"key": "a", "value": "x"}], "sizes": [{"key": "s", "value": 1}]}', "model", { mapBack: mapBackIn(schema) });
    // Read back as {"s": 1}: the spec's minProperties 2, left out of the request, refuses it.
    expect(one).toMatchObject({ valid: false, parsed: { labels: { a: "x" }, sizes: { s: 1 } } });
    expect(one.errors).toEqual([expect.stringMatching(/^sizes /)]);
    const twice = await checkText(spec, '{"labels": [{"key": "a", "value": "x"}, {"key": "a", "value": "y"}]}', "model", { mapBack: mapBackIn(schema) });
    expect(twice.errors).toEqual(['The answer names the key "a" twice among the entries of labels; each key may appear only once.']);
  });

  it("a union branch is chosen by shape with optional properties: only its keys, every required one present", () => {
    const schema = {
      type: "object",
      properties: {
        either: {
          anyOf: [
            {
              type: "object",
              properties: { tags: { type: "object", additionalProperties: { type: "string" } }, note: { type: "string" } },
              required: ["tags"],
            },
            { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
          ],
        },
      },
      required: ["either"],
    };
    const form = anthropicOf(schema);
    // Without the optional "note", the first branch still fits: its entries are read.
    expect(mapBackStrictAnswer({ either: { tags: [{ key: "k", value: "v" }] } }, form)).toEqual({
      value: { either: { tags: { k: "v" } } },
      changes: ["/either/tags: entries [ … ] read as an object"],
    });
    // A field of neither branch: no branch fits, nothing is changed, and the check step judges it as written.
    const neither = { either: { tags: [{ key: "k", value: "v" }], other: 1 } };
    expect(mapBackStrictAnswer(structuredClone(neither), form)).toEqual({ value: neither, changes: [] });
  });
});
