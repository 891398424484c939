// Preloaded (NODE_OPTIONS=--import) into the short-lived node processes that a test does not start
// itself: those a script starts (the Action's scripts/action-stream.mjs and the netform it runs), or
// an installed bin. SHORT_LIVED_NODE (test/helpers/cli.ts) cannot reach them: `--no-opt` is not
// allowed in NODE_OPTIONS, so it is set here, before the process's own modules load. What the
// process does and prints is the same; V8 just does not optimize the few functions that get hot
// in a process that lives a second or less.
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--no-opt');
