/**
 * What apply shows and asks (its plan, what it withholds, the confirmation, the outcome): loaded
 * once there is a plan to show, so that an apply whose files or server fail loads none of it.
 */
export async function applyViews() {
  const [views, { renderPlan }, { renderWithheld }, outcome] = await Promise.all([
    import('../views/apply.js'),
    import('../views/plan.js'),
    import('../views/reviewed.js'),
    import('./apply-outcome.js'),
  ]);
  const { NOTHING_REVIEWED, stoppingLine, exitingNowLine, unpinnedLine, haltedLine } = views;
  const { confirm, exitCodeOf, outcomeCode, readSecret } = outcome;
  const say = { NOTHING_REVIEWED, stoppingLine, exitingNowLine, unpinnedLine, haltedLine };
  return { say, renderPlan, renderWithheld, confirm, exitCodeOf, outcomeCode, readSecret };
}

export type ApplyViews = Awaited<ReturnType<typeof applyViews>>;

/** What reads a saved plan (`apply PLANFILE`, `--reviewed`): its key, its reader, and a plan worded as it is. */
export async function savedPlanReading() {
  const [{ planKeyOf }, { readSavedPlanFile }, { wordedPlan }] = await Promise.all([
    import('./flags/plan-key.js'),
    import('../ops/saved-plan-file.js'),
    import('../views/notes.js'),
  ]);
  return { planKeyOf, readSavedPlanFile, wordedPlan };
}
