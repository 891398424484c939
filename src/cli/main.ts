#!/usr/bin/env node
/** The `netform` command line: one file per command, each registering itself on the program. */
import { Command } from 'commander';
import { createRequire } from 'node:module';
import { installErrorBoundary } from './boundary.js';

// First of all: whatever fails from here on is printed by the boundary, never by Node's inspector.
installErrorBoundary();

const require = createRequire(import.meta.url);
const { version } = require('../../../package.json') as { version: string };

type Register = (program: Command) => void;

interface CommandEntry {
  /** The command's module, imported only when the command runs or its own help is asked for. */
  load: () => Promise<Register>;
  /** Its arguments and one line for the list of commands, so that `netform --help` imports none of them. */
  args: string;
  summary: string;
}

/**
 * Commands load their modules only when asked for: `netform validate` need not load the server,
 * the planner or cdktf, and the list of commands (`netform --help`) loads none of them.
 */
const commands: Record<string, CommandEntry> = {
  validate: {
    load: async () => (await import('./validate.js')).registerValidate,
    args: '',
    summary: 'check the desired state offline',
  },
  plan: {
    load: async () => (await import('./plan.js')).registerPlan,
    args: '',
    summary: 'show what apply would change on the server',
  },
  apply: {
    load: async () => (await import('./apply.js')).registerApply,
    args: '[saved-plan]',
    summary: 'make the server match the desired state, or apply a saved plan',
  },
  drift: {
    load: async () => (await import('./drift.js')).registerDrift,
    args: '',
    summary: 'report differences from the server, once or on a schedule',
  },
  export: {
    load: async () => (await import('./export.js')).registerExport,
    args: '',
    summary: 'write the live server as desired-state YAML',
  },
  show: {
    load: async () => (await import('./show.js')).registerShow,
    args: '[keys...]',
    summary: 'print live objects as desired-state YAML',
  },
  completion: {
    load: async () => (await import('./completion.js')).registerCompletion,
    args: '<shell>',
    summary: 'print a shell completion script (bash, zsh, fish)',
  },
  serve: {
    load: async () => (await import('./serve.js')).registerServe,
    args: '',
    summary: 'run the bundled /v0 server on a SQLite database file',
  },
  server: {
    load: async () => (await import('./server.js')).registerServer,
    args: '',
    summary: 'administer the bundled server: API tokens and server defaults',
  },
  test: {
    load: async () => (await import('./access.js')).registerTest,
    args: '',
    summary: 'run the access tests (tests:) offline or against the live server',
  },
  explain: {
    load: async () => (await import('./access.js')).registerExplain,
    args: '<from> <to>',
    summary: 'how the server decides one packet: verdict, deciding rule and stage',
  },
  'who-can-reach': {
    load: async () => (await import('./reach.js')).registerWhoCanReach,
    args: '<to>',
    summary: 'every source that reaches a destination, with the deciding rule',
  },
  reach: {
    load: async () => (await import('./reach.js')).registerReach,
    args: '<user>',
    summary: "everything a user's devices reach, with the rule behind each part",
  },
  nft: {
    load: async () => (await import('./nft.js')).registerNft,
    args: '',
    summary: 'print the nftables ruleset a Firezone 0.7.36 server installs for the state',
  },
};

const program = new Command('netform')
  .description('Manage the users, devices and rules of a /v0 network-access server as code.')
  .version(version)
  .showHelpAfterError()
  .configureOutput({ outputError: (text, write) => write(text) });

const requested = process.argv[2];
// `netform help plan` is plan's own help: load plan.
const target = requested === 'help' ? process.argv[3] : requested;
if (target !== undefined && Object.hasOwn(commands, target)) {
  (await commands[target]!.load())(program);
} else if (requested !== '--version' && requested !== '-V') {
  // The list of commands (help, an unknown command): names and summaries only.
  for (const [name, entry] of Object.entries(commands)) {
    program.command(`${name} ${entry.args}`.trim()).summary(entry.summary);
  }
}

await program.parseAsync(process.argv);
