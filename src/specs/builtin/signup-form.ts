/** Sign-up form data with field formats and cross-field consistency rules. */
import { describeValue } from "../../shared/text.js";
import { defineSpec } from "../spec.js";

/** The rules' messages, exported so that tests and tools match a rule through its message function, never a copy of its wording. */
export const signupFormMessages = {
  passwordsDiffer: () => "confirm_password does not equal password; they must be identical",
  consentRequired: (consent: unknown, age: number) =>
    `parental_consent is ${consent === undefined ? "missing" : describeValue(consent)}; age=${age} requires parental_consent = true`,
  passwordHasEmail: (localPart: string) => `password contains the e-mail's local part ${describeValue(localPart)}; it must not`,
};

export const signupFormSpec = defineSpec({
  name: "signup-form",
  description: "A user sign-up form submission: e-mail, password and its confirmation, birth year, country and consents.",
  schema: {
    type: "object",
    required: ["email", "password", "confirm_password", "age", "country", "accept_terms"],
    additionalProperties: false,
    properties: {
      email: { type: "string", format: "email", maxLength: 254 },
      password: { type: "string", minLength: 12, maxLength: 128 },
      confirm_password: { type: "string" },
      age: { type: "integer", minimum: 13, maximum: 130 },
      country: { type: "string", pattern: "^[A-Z]{2}$" },
      accept_terms: { type: "boolean", const: true },
      newsletter: { type: "boolean" },
      parental_consent: { type: "boolean" },
    },
  },
  rules: [
    {
      id: "passwords-match",
      description: "confirm_password must equal password.",
      inputs: { password: "string", confirm_password: "string" },
      check: (v) => (v.password === v.confirm_password ? null : signupFormMessages.passwordsDiffer()),
    },
    {
      id: "minors-need-consent",
      description: "age < 18 requires parental_consent = true.",
      inputs: { age: "integer" },
      check: (v, doc) => {
        const consent = (doc as { parental_consent?: unknown }).parental_consent;
        return v.age < 18 && consent !== true ? signupFormMessages.consentRequired(consent, v.age) : null;
      },
    },
    {
      id: "password-not-email",
      description: "password must not contain the e-mail's local part (the text before @).",
      inputs: { password: "string", email: "string" },
      check: (v) => {
        const local = v.email.split("@")[0]?.toLowerCase() ?? "";
        return local.length >= 3 && v.password.toLowerCase().includes(local) ? signupFormMessages.passwordHasEmail(local) : null;
      },
    },
  ],
  example: {
    email: "ada@example.com",
    password: "correct-horse-battery",
    confirm_password: "correct-horse-battery",
    age: 36,
    country: "GB",
    accept_terms: true,
    newsletter: false,
  },
});
