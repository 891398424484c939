export * from './evaluate.js';
export * from './model.js';
export * from './notation.js';
export * from './destination.js';
export * from './tests.js';
export * from './changes.js';
export * from './plan.js';
export * from './shadow.js';
export * from './partition.js';
export * from './reach.js';
/** A rule in words and where it comes from (model/rule.ts): re-exported for the access library's users. */
export { describeRule } from '../views/model-rule.js';
