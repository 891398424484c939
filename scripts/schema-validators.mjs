#!/usr/bin/env node
/**
 * Compiles the desired-state schema (and its variant for translated CDKTF documents) ahead of time
 * with ajv's standalone code, into dist/src/desired/schema-validators.cjs, so that `netform validate`
 * and every command that reads the desired state start without loading ajv and compiling the
 * schema (about a third of a second); and the plan schema (a plan, a saved plan) into
 * dist/src/plan/plan-schema-validators.cjs, for apply's reading of saved plans (src/plan/plan-schema.ts). Runs after tsc in `npm run build`: it takes the options and
 * the variant from the built schema.js, so both stay one definition. The file carries the schema's
 * digest; schema.ts compiles at run time instead when the digest differs (or the file is absent).
 */
import { writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020Module from 'ajv/dist/2020.js';
import standaloneModule from 'ajv/dist/standalone/index.js';
import schemaDocument from '../schemas/netform.schema.json' with { type: 'json' };
import planSchema from '../schemas/plan.schema.json' with { type: 'json' };

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { AJV_OPTIONS, schemaDigest, translatedSchema } = await import(join(root, 'dist/src/desired/schema.js'));
const Ajv2020 = Ajv2020Module.default;
const standaloneCode = standaloneModule.default;

const translated = translatedSchema();
const ajv = new Ajv2020({ ...AJV_OPTIONS, code: { source: true } });
ajv.addSchema(schemaDocument);
ajv.addSchema(translated);
const code = standaloneCode(ajv, { validate: schemaDocument.$id, validateTranslated: translated.$id });
await writeFile(
  join(root, 'dist/src/desired/schema-validators.cjs'),
  `${code}\nexports.digest = ${JSON.stringify(schemaDigest())};\n`,
);

const { PLAN_AJV_OPTIONS, SAVED_PLAN_SCHEMA_REF, planSchemaDigest } = await import(
  join(root, 'dist/src/plan/plan-schema.js')
);
const planAjv = new Ajv2020({ ...PLAN_AJV_OPTIONS, code: { source: true } });
planAjv.addSchema(planSchema);
const planCode = standaloneCode(planAjv, { validatePlan: planSchema.$id, validateSavedPlan: SAVED_PLAN_SCHEMA_REF });
await writeFile(
  join(root, 'dist/src/plan/plan-schema-validators.cjs'),
  `${planCode}\nexports.digest = ${JSON.stringify(planSchemaDigest())};\n`,
);
