// Part of the netform Action (scripts/action-run.sh): runs netform and streams what it writes to
// the job log as it is written, stdout and stderr in the order written, while stdout alone also
// goes to a file (the markdown comment, the json plan). `tee` would keep stdout and stderr on
// paths of different lengths, and a line of one could pass lines of the other written before it.
//
//   node action-stream.mjs OUTPUT_FILE tee|quiet NETFORM_MAIN_JS ARGS...
//
// netform runs in this process (one node start per Action run, not two): its process.stdout and
// process.stderr are replaced, before netform loads, by streams that write each chunk at once and
// whole (to stdout's file too), so the log has the chunks in the order netform wrote them. They
// never open the step's stdout as a Node stream, which would make the descriptor it shares with
// the Action's shell non-blocking.
//
// quiet: stdout goes to the file only (stderr still to the log). SIGINT and SIGTERM reach netform
// itself (its own process), which stops as on a terminal. Exits with netform's exit code, or
// 128 + the signal that ended it. The log ends with a line break when netform exits (the Action's
// shell adds one when it is killed): no partial line for the Action's next line (the one that
// resumes workflow commands) to join.
import { existsSync, openSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';

const [file, show, main, ...args] = process.argv.slice(2);
if (!file || !main || (show !== 'tee' && show !== 'quiet')) {
  process.stderr.write('usage: node action-stream.mjs OUTPUT_FILE tee|quiet NETFORM_MAIN_JS ARGS...\n');
  process.exit(2);
}
const out = openSync(file, 'w');

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

/** A stream for process.stdout or process.stderr: each chunk written through before write() returns. */
function relay(fd, take) {
  const stream = new Writable({
    write(chunk, _encoding, done) {
      try {
        take(chunk);
        done();
      } catch (error) {
        done(error);
      }
    },
  });
  stream.fd = fd; // as on a pipe: no isTTY, no columns
  return stream;
}

const stdout = relay(1, (chunk) => {
  writeAll(out, chunk);
  if (show === 'tee') toLog(1, chunk);
});
const stderr = relay(2, (chunk) => toLog(2, chunk));
for (const [name, stream] of [
  ['stdout', stdout],
  ['stderr', stderr],
])
  Object.defineProperty(process, name, { configurable: true, enumerable: true, get: () => stream });

process.on('exit', () => {
  if (!logLineEnded) writeAll(1, Buffer.from('\n'));
});

// netform's argv, as if it had been started as `node NETFORM_MAIN_JS ARGS...`.
const entry = resolve(main);
if (!existsSync(entry)) {
  process.stderr.write(`netform action: cannot start netform: no file ${entry} (is the Action's build there?)\n`);
  process.exit(1);
}
process.argv = [process.argv[0], entry, ...args];
await import(pathToFileURL(entry).href);
