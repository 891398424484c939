#!/usr/bin/env node
/** The `netform` command line: one file per command, each registering itself on the program. */
import { Command } from 'commander';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { version } = require('../../../package.json') as { version: string };

type Register = (program: Command) => void;

/**
 * Commands load their modules only when asked for: `netform validate` need not load the server,
 * the planner or cdktf. Help and unknown commands load them all, so help lists every command.
 */
const commands: Record<string, () => Promise<Register>> = {
  validate: async () => (await import('./validate.js')).registerValidate,
  plan: async () => (await import('./plan.js')).registerPlan,
  apply: async () => (await import('./apply.js')).registerApply,
  drift: async () => (await import('./drift.js')).registerDrift,
  export: async () => (await import('./export.js')).registerExport,
  serve: async () => (await import('./serve.js')).registerServe,
  server: async () => (await import('./server.js')).registerServer,
};

const program = new Command('netform')
  .description('Manage the users, devices and rules of a /v0 network-access server as code.')
  .version(version)
  .showHelpAfterError()
  .configureOutput({ outputError: (text, write) => write(text) });

const requested = process.argv[2];
const selected =
  requested !== undefined && Object.hasOwn(commands, requested)
    ? [requested]
    : requested === '--version' || requested === '-V'
      ? []
      : Object.keys(commands);
for (const name of selected) (await commands[name]!())(program);

await program.parseAsync(process.argv);
