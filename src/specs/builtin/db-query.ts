/** Database query parameters: table, columns, filters, ordering and pagination. */
import { describeValue } from "../../shared/text.js";
import { defineSpec } from "../spec.js";

/** The rules' messages, exported so that tests and tools match a rule through its message function, never a copy of its wording. */
export const dbQueryMessages = {
  orderByColumn: (column: unknown, columns: unknown[]) =>
    `order_by.column is ${describeValue(column)}; it must be one of the selected columns (${columns
      .slice(0, 10)
      .map((c) => describeValue(c, 30))
      .join(", ")}${columns.length > 10 ? ", …" : ""})`,
  offsetNeedsOrder: (offset: number) => `order_by is missing; offset=${offset} requires order_by so that pages are stable`,
  paginationWindow: (limit: number, offset: number) => `limit + offset is ${limit + offset} (limit=${limit}, offset=${offset}); it must be <= 10000`,
  inNeedsList: (index: number, value: unknown) => `filters[${index}].value is ${describeValue(value)}; op "in" requires an array of 1 to 100 values`,
  singleValue: (index: number, op: string) => `filters[${index}].value is an array; op ${JSON.stringify(op)} requires a single value (use op "in" for a list)`,
};

export const dbQuerySpec = defineSpec({
  name: "db-query",
  description: "Parameters of a read-only database query: table, selected columns, filters, ordering and pagination.",
  schema: {
    type: "object",
    required: ["table", "columns", "filters", "limit", "offset"],
    additionalProperties: false,
    properties: {
      table: { type: "string", pattern: "^[a-z_][a-z0-9_]*$", maxLength: 63 },
      columns: {
        type: "array",
        minItems: 1,
        maxItems: 50,
        uniqueItems: true,
        items: { type: "string", pattern: "^[a-z_][a-z0-9_]*$" },
      },
      filters: {
        type: "array",
        maxItems: 20,
        items: {
          type: "object",
          required: ["column", "op", "value"],
          additionalProperties: false,
          properties: {
            column: { type: "string", pattern: "^[a-z_][a-z0-9_]*$" },
            op: { type: "string", enum: ["=", "!=", "<", "<=", ">", ">=", "in", "like"] },
            value: {},
          },
        },
      },
      order_by: {
        type: "object",
        required: ["column", "direction"],
        additionalProperties: false,
        properties: {
          column: { type: "string", pattern: "^[a-z_][a-z0-9_]*$" },
          direction: { type: "string", enum: ["asc", "desc"] },
        },
      },
      limit: { type: "integer", minimum: 1, maximum: 1000 },
      offset: { type: "integer", minimum: 0 },
    },
  },
  rules: [
    {
      id: "order-by-selected-column",
      description: "order_by.column must be one of the selected columns.",
      inputs: { "order_by.column": "string", columns: "array" },
      check: (v) => (v.columns.includes(v["order_by.column"]) ? null : dbQueryMessages.orderByColumn(v["order_by.column"], v.columns)),
    },
    {
      id: "offset-needs-order",
      description: "offset > 0 requires order_by, so that pages are stable.",
      inputs: { offset: "integer" },
      check: (v, doc) => (v.offset > 0 && (doc as { order_by?: unknown }).order_by === undefined ? dbQueryMessages.offsetNeedsOrder(v.offset) : null),
    },
    {
      id: "pagination-window",
      description: "limit + offset must be <= 10000.",
      inputs: { limit: "integer", offset: "integer" },
      check: (v) => (v.limit + v.offset > 10000 ? dbQueryMessages.paginationWindow(v.limit, v.offset) : null),
    },
    {
      id: "in-needs-list",
      description: 'A filter with op "in" must have an array value with 1 to 100 items; other ops must not have an array value.',
      inputs: { filters: "array" },
      check: (v) => {
        const problems: string[] = [];
        v.filters.forEach((f: { op?: unknown; value?: unknown } | null, i: number) => {
          if (f === null || typeof f !== "object" || typeof f.op !== "string" || !("value" in f)) return;
          const isList = Array.isArray(f.value);
          if (f.op === "in" && (!isList || (f.value as unknown[]).length === 0 || (f.value as unknown[]).length > 100)) {
            problems.push(dbQueryMessages.inNeedsList(i, f.value));
          } else if (f.op !== "in" && isList) {
            problems.push(dbQueryMessages.singleValue(i, f.op));
          }
        });
        return problems;
      },
    },
  ],
  example: {
    table: "orders",
    columns: ["id", "customer_id", "total", "created_at"],
    filters: [{ column: "status", op: "in", value: ["paid", "shipped"] }],
    order_by: { column: "created_at", direction: "desc" },
    limit: 50,
    offset: 100,
  },
});
