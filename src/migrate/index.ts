/** The migration off 0.7 (docs/firezone-1x.md): the 1.x evaluator, the compiler, its Terraform JSON and checker. */
export * from './access.js';
export * from './evaluate-1x.js';
export * from './compile.js';
export * from './terraform.js';
export * from './check.js';
export * from './facts.js';
export type * from './types.js';
