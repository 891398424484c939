/**
 * The plan schema with every object closed to members it does not describe (`unevaluatedProperties:
 * false`): the file itself leaves them open (members may be added within a version), but every
 * member netform writes today must be documented. The saved plan's additions to the plan are left
 * as they are: they only narrow what the plan's definitions close.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { PLAN_AJV_OPTIONS, PLAN_SCHEMA, SAVED_PLAN_SCHEMA_REF } from '../../src/plan/plan-schema.js';

function closedSchema(): object {
  const close = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(close);
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node))
      // A condition and its branches narrow a shape described elsewhere: closed, they would refuse its members.
      out[k] = k === 'properties' ? closeEach(v) : ['savedPlan', 'if', 'then', 'else'].includes(k) ? v : close(v);
    if ('properties' in node && !('if' in node)) out.unevaluatedProperties = false;
    return out;
  };
  const closeEach = (props: unknown) =>
    Object.fromEntries(Object.entries(props as Record<string, unknown>).map(([k, v]) => [k, close(v)]));
  return close(PLAN_SCHEMA) as object;
}

/** Validators of a plan document and of a saved plan against the closed schema. */
export function closedPlanValidators() {
  const ajv = new Ajv2020({ ...PLAN_AJV_OPTIONS, allErrors: true });
  const closed = { ...closedSchema(), $id: PLAN_SCHEMA.$id.replace('plan.schema', 'plan-closed.schema') };
  ajv.addSchema(closed);
  return {
    plan: ajv.getSchema(closed.$id)!,
    saved: ajv.getSchema(SAVED_PLAN_SCHEMA_REF.replace('plan.schema', 'plan-closed.schema'))!,
  };
}
