export * from './decisions.js';
export * from './report.js';
export * from './format.js';
