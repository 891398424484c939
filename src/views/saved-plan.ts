/**
 * Why a saved plan is refused, in words: a SavedPlanRefusal's code and values (src/plan/planfile.ts)
 * as `apply PLANFILE` prints them, each saying what to do.
 */
import type { SavedPlanRefusal } from '../plan/planfile.js';
import type { PlanKeySource } from '../plan/seal.js';

const AGAIN = 'make it again with netform plan -f PATH -o PLANFILE';
const KEY_ENV = 'NETFORM_PLAN_KEY';

const SOURCES: Record<PlanKeySource, string> = {
  NETFORM_PLAN_KEY: KEY_ENV,
  token: 'the API token',
  'embedded-token': "the embedded server's token",
};

export function savedPlanRefusalText(refusal: SavedPlanRefusal): string {
  const { path } = refusal;
  switch (refusal.code) {
    case 'unreadable':
      return refusal.rule ? `${path}: ${refusal.problem}` : `${path}: cannot read the saved plan (${refusal.problem})`;
    case 'not_json':
      return `${path}: not a saved plan (not JSON). To apply desired-state files, pass them with -f: netform apply -f ${path}`;
    case 'not_plan_format':
      return `${path}: not a saved plan (its "format" is not "${refusal.format}")`;
    case 'proto_member':
      return `${path}: the saved plan has a member named __proto__ (in ${refusal.at === '' ? '(the top level)' : refusal.at}), which netform never writes; it was edited by hand. Nothing was changed; ${AGAIN}`;
    case 'schema':
      return `${path}: the saved plan does not have the shape of plan format version ${String(refusal.version)} (${refusal.at || 'the document'}: ${refusal.problem}). Nothing was changed; ${AGAIN}`;
    case 'earlier_version':
      return `${path}: the saved plan was made by an earlier netform (plan format version ${refusal.version}; this netform reads versions ${refusal.read.join(' and ')}, which are sealed): plan again, then apply the new plan. Nothing was changed`;
    case 'newer_version':
      return `${path}: the saved plan was made by a newer netform (plan format version ${refusal.version}; this netform reads versions ${refusal.read.join(' and ')}): upgrade netform to apply it, or make the plan with this netform. Nothing was changed`;
    case 'unsupported_version':
      return `${path}: plan format version ${refusal.version !== null ? String(refusal.version) : '(not a whole number)'} is not supported by this netform (it reads versions ${refusal.read.join(' and ')}); make the plan again`;
    case 'not_canonical': {
      const why = refusal.nested
        ? `it is nested deeper than ${refusal.depth} levels`
        : 'it holds a value JSON cannot hold';
      return `${path}: not a saved plan netform wrote (${why}). Nothing was changed; ${AGAIN}`;
    }
    case 'unsealed':
      return `${path}: the saved plan has no seal, so it cannot be told apart from a plan edited by hand (a drift report's JSON is not a saved plan). Nothing was changed; ${AGAIN}`;
    case 'modified':
      return `${path}: the saved plan was modified after netform plan wrote it (its seal does not match). Nothing was changed; ${AGAIN}`;
    case 'other_key': {
      const { sealedWith, keySource } = refusal;
      const why =
        sealedWith === null
          ? 'another key'
          : sealedWith === keySource
            ? `another ${SOURCES[sealedWith].replace(/^the /, '')}`
            : `${SOURCES[sealedWith]}, and this run has ${keySource === 'NETFORM_PLAN_KEY' ? `${KEY_ENV} set` : `${SOURCES[keySource]} (${KEY_ENV} is not set)`}`;
      return `${path}: the saved plan was sealed under another key (it was made with ${why}). Plan and apply must share the API token or ${KEY_ENV}: give both the same token, or the same ${KEY_ENV} (for example, CI plan and apply jobs with different tokens). Nothing was changed`;
    }
  }
}
