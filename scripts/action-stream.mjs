// Part of the netform Action (scripts/action-run.sh): runs netform and streams what it writes to
// the job log as it is written, stdout and stderr through this one process so that the log keeps
// their order, while stdout alone also goes to a file (the markdown comment, the json plan).
// `tee` would keep stdout and stderr on paths of different lengths, and a line of one could pass
// lines of the other written before it.
//
//   node action-stream.mjs OUTPUT_FILE tee|quiet NETFORM_MAIN_JS ARGS...
//
// quiet: stdout goes to the file only (stderr still to the log). SIGINT and SIGTERM are passed on to
// netform, once each time they arrive (a second one makes it exit at once, as on a terminal). Exits
// with netform's exit code, or 128 + the signal that ended it. The log always ends with a line
// break: a netform killed in the middle of a line leaves no partial line for the Action's next
// line (the one that resumes workflow commands) to join.
import { spawn } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { constants } from 'node:os';

const [file, show, main, ...args] = process.argv.slice(2);
if (!file || !main || (show !== 'tee' && show !== 'quiet')) {
  process.stderr.write('usage: node action-stream.mjs OUTPUT_FILE tee|quiet NETFORM_MAIN_JS ARGS...\n');
  process.exit(2);
}
const out = openSync(file, 'w');
const child = spawn(process.execPath, [main, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });

/** Whether the log's last byte so far ends a line (nothing written yet counts as ended). */
let logLineEnded = true;

/** Writes all of `chunk` to a descriptor, whatever a pipe takes at once. */
function writeAll(fd, chunk) {
  for (let done = 0; done < chunk.length;) {
    try {
      done += writeSync(fd, chunk, done);
    } catch (error) {
      if (error.code !== 'EAGAIN') throw error;
    }
  }
}

/** Writes to the log (stdout or stderr: the Action makes them one stream). */
function toLog(fd, chunk) {
  if (chunk.length === 0) return;
  writeAll(fd, chunk);
  logLineEnded = chunk[chunk.length - 1] === 0x0a;
}

child.stdout.on('data', (chunk) => {
  writeAll(out, chunk);
  if (show === 'tee') toLog(1, chunk);
});
child.stderr.on('data', (chunk) => toLog(2, chunk));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('error', (error) => {
  process.stderr.write(`netform action: cannot start netform: ${error.message}\n`);
  process.exit(1);
});
child.on('close', (code, signal) => {
  closeSync(out);
  if (!logLineEnded) writeAll(1, Buffer.from('\n'));
  process.exit(code ?? 128 + (constants.signals[signal] ?? 0));
});
