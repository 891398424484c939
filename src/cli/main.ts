#!/usr/bin/env node
/**
 * The `netform` command line, and its one command registry: `netform --help` lists it, the shell
 * completion (commands/completion.ts) is made from it, and each command's module (one file per
 * command in commands/) is imported from it only when that command runs.
 */
import { Command } from 'commander';
import { NETFORM_VERSION } from '../version.js';
import { installErrorBoundary } from './boundary.js';
import type { Registry } from './command.js';

// First of all: whatever fails from here on is printed by the boundary, never by Node's inspector.
installErrorBoundary();

/**
 * Commands load their modules only when asked for: `netform validate` need not load the server,
 * the planner or cdktf, and the list of commands (`netform --help`) loads none of them.
 */
const commands: Registry = {
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
  nft: {
    load: async () => (await import('./commands/nft.js')).registerNft,
    args: '',
    summary: 'print the nftables ruleset a Firezone 0.7.36 server installs for the state',
  },
};

const program = new Command('netform')
  .description('Manage the users, devices and rules of a /v0 network-access server as code.')
  .version(NETFORM_VERSION)
  .showHelpAfterError()
  .configureOutput({ outputError: (text, write) => write(text) });

const requested = process.argv[2];
// `netform help plan` is plan's own help: load plan.
const target = requested === 'help' ? process.argv[3] : requested;
if (target !== undefined && Object.hasOwn(commands, target)) {
  (await commands[target]!.load())(program, commands);
} else if (requested !== '--version' && requested !== '-V') {
  // The list of commands (help, an unknown command): names and summaries only.
  for (const [name, entry] of Object.entries(commands)) {
    program.command(`${name} ${entry.args}`.trim()).summary(entry.summary);
  }
}

await program.parseAsync(process.argv);
