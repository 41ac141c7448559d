/**
 * The evaluation suite: requests across the four built-in specs, written as a
 * user would write them. `difficulty` says how many constraints a first
 * answer typically breaks: "easy" requests are plain, "hard" ones pack several
 * constraints and cross-field rules into one request, the kind whose first
 * answers typically break several at once. The simulated model reads it to
 * decide how many defects to seed (see eval/simulated-model.ts); a real model
 * ignores it.
 */
import type { Difficulty } from "../src/simulated/defects.js";

export type { Difficulty };

export interface EvalRequest {
  id: string;
  spec: "deployment-config" | "api-request" | "db-query" | "signup-form";
  request: string;
  difficulty: Difficulty;
}

export const SUITE: readonly EvalRequest[] = [
  // deployment-config: the source article's schema and rules
  { id: "deploy-01", spec: "deployment-config", difficulty: "easy", request: "A deployment config for payments-api with 3 replicas." },
  { id: "deploy-02", spec: "deployment-config", difficulty: "medium", request: "A deployment config for payments-api with 8 replicas." },
  {
    id: "deploy-03",
    spec: "deployment-config",
    difficulty: "hard",
    request:
      "Deploy Checkout_Service with 12 replicas, half a CPU each, 100 MB of memory, and a health check on healthz every 10 seconds with a 30 second timeout.",
  },
  {
    id: "deploy-04",
    spec: "deployment-config",
    difficulty: "easy",
    request: "A small deployment for the notifications service: one replica, 256 MB of memory, health check on /health.",
  },
  {
    id: "deploy-05",
    spec: "deployment-config",
    difficulty: "hard",
    request: "Search Indexer v2: 25 replicas, 0.25 CPU, 64 MB RAM, health check path 'ready', timeout 15 s, interval 10 s.",
  },
  {
    id: "deploy-06",
    spec: "deployment-config",
    difficulty: "medium",
    request: "A deployment for ledger with 6 replicas; the health check should time out after 10 seconds and run every 10 seconds.",
  },
  { id: "deploy-07", spec: "deployment-config", difficulty: "easy", request: "Config for the gateway service, 4 replicas, 2 CPUs and 2 GB of memory." },
  {
    id: "deploy-08",
    spec: "deployment-config",
    difficulty: "hard",
    request:
      "Scale the Fraud Detector to 20 replicas on minimal resources (0.1 CPU, 96 MB) and make the health check as aggressive as possible: every second, 2 s timeout.",
  },
  {
    id: "deploy-09",
    spec: "deployment-config",
    difficulty: "medium",
    request: "Deployment for reporting-worker: 10 replicas, 512 MB each, default CPU, health check on /status.",
  },
  {
    id: "deploy-10",
    spec: "deployment-config",
    difficulty: "easy",
    request: "A deployment config for the auth service with 2 replicas and a health check every 30 seconds.",
  },
  {
    id: "deploy-11",
    spec: "deployment-config",
    difficulty: "hard",
    request: "Image Resizer: 16 replicas with 0.5 CPU and 20 GB of memory, health endpoint 'healthz' polled every 3 s with a 5 s timeout.",
  },

  // api-request
  {
    id: "api-01",
    spec: "api-request",
    difficulty: "easy",
    request: "GET the list of orders from https://api.example.com/v1/orders with a 5 second timeout and no retries.",
  },
  {
    id: "api-02",
    spec: "api-request",
    difficulty: "medium",
    request: "POST a new order (sku A-1, quantity 2) to https://api.example.com/v1/orders with 3 retries.",
  },
  {
    id: "api-03",
    spec: "api-request",
    difficulty: "hard",
    request: "post a refund of 20 EUR for order 42 to http://payments.example.com/refunds, retry 4 times, 60 second timeout, send an auth_token too.",
  },
  { id: "api-04", spec: "api-request", difficulty: "easy", request: "DELETE the session at https://auth.example.com/v1/sessions/abc with a 2 second timeout." },
  {
    id: "api-05",
    spec: "api-request",
    difficulty: "medium",
    request: "PUT the updated user profile (name Ada, locale en-GB) to https://api.example.com/v1/users/7, one retry, 10 s timeout.",
  },
  {
    id: "api-06",
    spec: "api-request",
    difficulty: "hard",
    request: "PATCH the inventory at https://inventory.example.com/items/9 setting stock to 0; be patient: 90 second timeout and 7 retries.",
  },
  {
    id: "api-07",
    spec: "api-request",
    difficulty: "easy",
    request: "HEAD request to https://cdn.example.com/assets/logo.png to check it exists, 1 second timeout.",
  },
  {
    id: "api-08",
    spec: "api-request",
    difficulty: "medium",
    request: "POST a webhook event {type: 'invoice.paid'} to https://hooks.example.com/in, retry twice with a 30 second timeout.",
  },
  {
    id: "api-09",
    spec: "api-request",
    difficulty: "hard",
    request: "Create a customer via post to http://crm.example.com/customers with body {name: 'Grace'}, 5 retries, 30 s timeout, plus an api_key field.",
  },
  {
    id: "api-10",
    spec: "api-request",
    difficulty: "medium",
    request: "GET https://api.example.com/v1/reports?month=2024-05 with a 60 second timeout and 1 retry, passing the filter as a JSON body.",
  },

  // db-query
  { id: "db-01", spec: "db-query", difficulty: "easy", request: "The 50 most recent orders: id, total and created_at." },
  {
    id: "db-02",
    spec: "db-query",
    difficulty: "medium",
    request: "Page 3 (50 per page) of paid or shipped orders, newest first, with id, customer_id and total.",
  },
  {
    id: "db-03",
    spec: "db-query",
    difficulty: "hard",
    request: "From Orders, select id, id, total; status in paid/shipped; order by updated_at DESC; 5000 rows starting at offset 9000.",
  },
  { id: "db-04", spec: "db-query", difficulty: "easy", request: "Names and e-mails of the first 20 customers in the customers table." },
  { id: "db-05", spec: "db-query", difficulty: "medium", request: "Invoices over 1000 EUR, sorted by amount descending, 100 per page, page 2." },
  {
    id: "db-06",
    spec: "db-query",
    difficulty: "hard",
    request: "Users whose country is one of GB, FR or DE, columns Email and created_at, sort by last_login, limit 2000, skip the first 500.",
  },
  { id: "db-07", spec: "db-query", difficulty: "easy", request: "The 10 cheapest products: sku, name, price, ordered by price ascending." },
  { id: "db-08", spec: "db-query", difficulty: "medium", request: "Events of type 'login' for user 7, newest first, 25 per page, third page." },
  {
    id: "db-09",
    spec: "db-query",
    difficulty: "hard",
    request: "Shipments: id, carrier, carrier, status; status 'in' transit or delayed; ordered by eta DESC; 3000 rows after skipping 8000.",
  },
  {
    id: "db-10",
    spec: "db-query",
    difficulty: "medium",
    request: "Open support tickets with priority above 2, columns id, subject, priority, sorted by priority, 50 rows from offset 50.",
  },

  // signup-form
  {
    id: "signup-01",
    spec: "signup-form",
    difficulty: "easy",
    request: "Sign-up data for Ada Lovelace, ada@example.com, 36, from the UK, accepting the terms.",
  },
  {
    id: "signup-02",
    spec: "signup-form",
    difficulty: "medium",
    request: "Sign up a 16-year-old from France, e-mail lea@example.fr, who wants the newsletter.",
  },
  {
    id: "signup-03",
    spec: "signup-form",
    difficulty: "hard",
    request:
      "Sign-up for grace@example.com, password 'grace2024' typed twice (second time with a typo), age 'seventeen', country 'us', and she has not accepted the terms yet.",
  },
  { id: "signup-04", spec: "signup-form", difficulty: "easy", request: "A sign-up for alan@example.org, 41 years old, from Germany, no newsletter." },
  {
    id: "signup-05",
    spec: "signup-form",
    difficulty: "medium",
    request: "A sign-up form for a 15-year-old in Spain, e-mail pablo.example.com, newsletter yes.",
  },
  {
    id: "signup-06",
    spec: "signup-form",
    difficulty: "hard",
    request: "Register ken@example.jp, 14 years old, country Japan, password 'ken', terms not accepted, no parental consent yet.",
  },
  {
    id: "signup-07",
    spec: "signup-form",
    difficulty: "easy",
    request: "Sign-up data: margaret@example.com, 29, United States, accepts the terms, wants the newsletter.",
  },
  { id: "signup-08", spec: "signup-form", difficulty: "medium", request: "A sign-up for linus@example.fi aged 17 from Finland with a strong password." },
  {
    id: "signup-09",
    spec: "signup-form",
    difficulty: "hard",
    request: "Sign-up: barbara@example.com, password barbara-liskov-1, confirm barbara-liskov-2, age 13, country 'usa', terms false.",
  },
  {
    id: "signup-10",
    spec: "signup-form",
    difficulty: "medium",
    request: "A sign-up for tim@example.co.uk, 52, from the UK, password containing his name is fine for him.",
  },
];
