export * from './evaluate.js';
export * from './model.js';
export * from './notation.js';
export * from './tests.js';
export * from './changes.js';
export * from './plan.js';
export * from './shadow.js';
