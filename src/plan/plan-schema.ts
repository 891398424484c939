/**
 * The plan schema (schemas/plan.schema.json) applied with ajv: a plan document as `plan --format
 * json` prints it, and a saved plan (`#/$defs/savedPlan`) as planfile.ts reads it once its seal
 * holds. As for the desired-state schema (src/desired/schema.ts), `npm run build` compiles both
 * validators ahead of time (scripts/schema-validators.mjs) so that apply does not compile the
 * schema at every start; they are compiled here when that file is absent or from another schema.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import planSchema from '../../schemas/plan.schema.json' with { type: 'json' };

const require = createRequire(import.meta.url);

export const PLAN_SCHEMA = planSchema;
/** The schema of a saved plan, within the plan schema. */
export const SAVED_PLAN_SCHEMA_REF = `${planSchema.$id}#/$defs/savedPlan`;

/** ajv's options for the plan schema (scripts/schema-validators.mjs compiles it ahead of time with the same). */
export const PLAN_AJV_OPTIONS = { allErrors: false, strict: true, allowUnionTypes: true } as const;

/** Identifies the schema file's content: validators compiled ahead of time from another one are not used. */
export function planSchemaDigest(): string {
  return createHash('sha256').update(JSON.stringify(planSchema)).digest('hex');
}

interface PlanValidators {
  validatePlan: ValidateFunction;
  validateSavedPlan: ValidateFunction;
}

let validators: PlanValidators | undefined;

function loadValidators(): PlanValidators {
  try {
    const built = require('./plan-schema-validators.cjs') as PlanValidators & { digest: string };
    if (built.digest === planSchemaDigest()) return built;
  } catch {
    // not built: compile below
  }
  // ajv is CommonJS: its default export is the class.
  const { default: Ajv2020 } = require('ajv/dist/2020.js') as {
    default: new (options: object) => { addSchema(schema: object): unknown; getSchema(ref: string): ValidateFunction };
  };
  const ajv = new Ajv2020(PLAN_AJV_OPTIONS);
  ajv.addSchema(planSchema);
  return { validatePlan: ajv.getSchema(planSchema.$id), validateSavedPlan: ajv.getSchema(SAVED_PLAN_SCHEMA_REF) };
}

/** Where a document breaks the schema, and how: `changes[0].secrets[0]: must have required property 'hmac'`. */
export interface PlanSchemaProblem {
  at: string;
  message: string;
}

/** The first way `doc` breaks the plan schema (the saved-plan one with `saved`), or null when it holds. */
export function planSchemaProblem(doc: unknown, saved: boolean): PlanSchemaProblem | null {
  validators ??= loadValidators();
  const validate = saved ? validators.validateSavedPlan : validators.validatePlan;
  if (validate(doc)) return null;
  const error = (validate.errors ?? [])[0];
  return error ? { at: pathOf(error), message: error.message ?? 'is invalid' } : { at: '', message: 'is invalid' };
}

/** An ajv instance path (`/changes/0/secrets/0`) as people read it: `changes[0].secrets[0]`. */
function pathOf(error: ErrorObject): string {
  return error.instancePath
    .split('/')
    .slice(1)
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, key) => (/^\d+$/.test(key) ? `${path}[${key}]` : path ? `${path}.${key}` : key), '');
}
