#!/usr/bin/env node
/** The `netform` command line: one file per command, each registering itself on the program. */
import { Command } from 'commander';
import { createRequire } from 'node:module';
import { registerApply } from './apply.js';
import { registerDrift } from './drift.js';
import { registerExport } from './export.js';
import { registerPlan } from './plan.js';
import { registerServe } from './serve.js';
import { registerServer } from './server.js';
import { registerValidate } from './validate.js';

const require = createRequire(import.meta.url);
const { version } = require('../../../package.json') as { version: string };

const program = new Command('netform')
  .description('Manage the users, devices and rules of a /v0 network-access server as code.')
  .version(version)
  .showHelpAfterError()
  .configureOutput({ outputError: (text, write) => write(text) });

registerValidate(program);
registerPlan(program);
registerApply(program);
registerDrift(program);
registerExport(program);
registerServe(program);
registerServer(program);

await program.parseAsync(process.argv);
