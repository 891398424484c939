export * from './cron.js';
export * from './loop.js';
export * from './report.js';
export * from './sinks.js';
