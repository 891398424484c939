#!/usr/bin/env node
/**
 * The `netform` bin: the process around run(argv, io) (run.ts). The last-resort error boundary
 * is installed first, so that whatever fails is printed by it, never by Node's inspector; the
 * process's io carries its streams, environment, folder and signals (process.ts).
 */
import { installErrorBoundary, processIo } from './process.js';
import { run } from './run.js';

const io = processIo();
installErrorBoundary(io);
process.exitCode = await run(process.argv.slice(2), io);
