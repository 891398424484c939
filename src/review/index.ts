export * from './decisions.js';
export * from './report.js';
