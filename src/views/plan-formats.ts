/** The formats of a plan (plan and drift's --format): a module of its own, so the flags' help loads no renderer. */
export type PlanFormat = 'text' | 'json' | 'markdown';
export const PLAN_FORMATS: readonly PlanFormat[] = ['text', 'json', 'markdown'];
