/**
 * The command line's one command registry: `netform --help` lists it, the shell completion
 * (commands/completion.ts) is made from it, and each command's module (one file per command in
 * commands/) is imported from it only when that command runs.
 */
import type { Registry } from './command.js';

/**
 * Commands load their modules only when asked for: `netform validate` need not load the server,
 * the planner or cdktf, and the list of commands (`netform --help`) loads none of them.
 */
export const commands: Registry = {
  validate: {
    load: async () => (await import('./commands/validate.js')).registerValidate,
    args: '',
    summary: 'check the desired state offline',
  },
  plan: {
    load: async () => (await import('./commands/plan.js')).registerPlan,
    args: '',
    summary: 'show what apply would change on the server',
  },
  apply: {
    load: async () => (await import('./commands/apply.js')).registerApply,
    args: '[saved-plan]',
    summary: 'make the server match the desired state, or apply a saved plan',
  },
  drift: {
    load: async () => (await import('./commands/drift.js')).registerDrift,
    args: '',
    summary: 'report differences from the server, once or on a schedule',
  },
  acknowledge: {
    load: async () => (await import('./commands/acknowledge.js')).registerAcknowledge,
    args: '<key> [field]',
    summary: 'keep a difference from the files until a date (writes an acknowledged: entry)',
  },
  export: {
    load: async () => (await import('./commands/export.js')).registerExport,
    args: '',
    summary: 'write the live server as desired-state YAML',
  },
  show: {
    load: async () => (await import('./commands/show.js')).registerShow,
    args: '[keys...]',
    summary: 'print live objects as desired-state YAML',
  },
  adopt: {
    load: async () => (await import('./commands/adopt.js')).registerAdopt,
    args: '[keys...]',
    summary: 'write live values changed by hand into the desired-state files',
  },
  completion: {
    load: async () => (await import('./commands/completion.js')).registerCompletion,
    args: '<shell>',
    summary: 'print a shell completion script (bash, zsh, fish)',
  },
  serve: {
    load: async () => (await import('./commands/serve.js')).registerServe,
    args: '',
    summary: 'run the bundled /v0 server on a SQLite file or a PostgreSQL database',
  },
  server: {
    load: async () => (await import('./commands/server.js')).registerServer,
    args: '',
    summary: 'administer the bundled server: API tokens and server defaults',
  },
  test: {
    load: async () => (await import('./commands/test.js')).registerTest,
    args: '',
    summary: 'run the access tests (tests:) offline or against the live server',
  },
  explain: {
    load: async () => (await import('./commands/explain.js')).registerExplain,
    args: '<from> <to>',
    summary: 'how the server decides one packet: verdict, deciding rule and stage',
  },
  'who-can-reach': {
    load: async () => (await import('./commands/reach.js')).registerWhoCanReach,
    args: '<to>',
    summary: 'every source that reaches a destination, with the deciding rule',
  },
  reach: {
    load: async () => (await import('./commands/reach.js')).registerReach,
    args: '<user>',
    summary: "everything a user's devices reach, with the rule behind each part",
  },
  review: {
    load: async () => (await import('./commands/review.js')).registerReview,
    args: '',
    summary: 'a periodic access review: who reaches what, stale devices, unused accounts and rules',
  },
  check: {
    load: async () => (await import('./commands/check.js')).registerCheck,
    args: '<gate>',
    summary: 'access gates for CI: no-new-access, no-access-to',
  },
  nft: {
    load: async () => (await import('./commands/nft.js')).registerNft,
    args: '',
    summary: 'print the nftables ruleset a Firezone 0.7.36 server installs for the state',
  },
  migrate: {
    load: async () => (await import('./commands/migrate.js')).registerMigrate,
    args: '<target>',
    summary: 'compile the 0.7 state into Firezone 1.x objects, with a per-user report of what changes',
  },
};
