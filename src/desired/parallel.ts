/**
 * Many desired-state files read at once: a small pool of worker threads parses each file and reads
 * its documents (src/desired/load-worker.ts), and hands back plain data, which the main thread
 * merges and checks as one state (src/desired/pipeline.ts, finishReading). The result and every
 * diagnostic are the same as on one thread, in the same order: each file's part is put back in
 * reading order before anything is merged.
 *
 * Off unless asked for (LoadOptions.workers): on the 2-core machine of bench/plan-layouts.mjs the
 * workers did not pay. Each starts a thread, imports the loader and warms it up again, and the
 * declarations are copied back and walked twice; reading the 100 files of the 10,000-user fleet took
 * a third more processor time with two workers and longer on the clock, with 45 MB more peak RSS
 * (bench/RESULTS.md, "W3.9"). Kept, with its equivalence tests, for machines with cores to spare.
 */
import { Worker } from 'node:worker_threads';
import { takeOver, type HandedDeclarations } from './document.js';
import type { DocumentRead } from './pipeline.js';
import type { Environment } from './secrets.js';
import type { Diagnostic } from './types.js';

/** One document's read as a worker hands it over (its locations as plain data: handOver). */
export interface HandedRead {
  diagnostics: Diagnostic[];
  warnings: Diagnostic[];
  declarations?: HandedDeclarations;
}

/** One file's part: its syntax problems, and the reads of its documents in order. */
export interface FileRead {
  parseDiagnostics: Diagnostic[];
  reads: HandedRead[];
}

/** One file's part as this thread uses it. */
export interface FilePart {
  parseDiagnostics: Diagnostic[];
  reads: DocumentRead[];
}

/** A request to a worker, and its answer (either the file's part or an unexpected error). */
export interface FileJob {
  index: number;
  text: string;
  file: string;
}
export type FileAnswer = { index: number; read: FileRead } | { index: number; error: Error };

/** How many workers: as many as asked for, never more than there are files; none by default. */
export function workersFor(files: number, requested = 0): number {
  return Math.max(0, Math.min(requested, files));
}

/**
 * Reads `texts` (with their shown names `files`) in `count` workers; the answers in file order.
 * A worker that fails unexpectedly fails the load with its own error (message and stack, as a
 * failure on this thread would be reported); the other workers are stopped.
 */
export async function readFilesInWorkers(
  texts: string[],
  files: string[],
  env: Environment,
  count: number,
): Promise<FilePart[]> {
  const results: FilePart[] = new Array<FilePart>(texts.length);
  let next = 0;
  const workers: Worker[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      let pending = texts.length;
      const give = (worker: Worker): void => {
        if (next >= texts.length) return;
        const index = next++;
        const job: FileJob = { index, text: texts[index]!, file: files[index]! };
        // Each text goes once: let it go here as soon as it is sent.
        texts[index] = '';
        worker.postMessage(job);
      };
      for (let i = 0; i < count; i++) {
        // The environment goes to the worker for `{ env: NAME }` secrets, which are looked up there
        // (to warn of one that cannot be read), never printed.
        const worker = new Worker(new URL('./load-worker.js', import.meta.url), {
          workerData: { env: { ...env } },
          stdout: false,
          stderr: false,
        });
        workers.push(worker);
        worker.on('message', (answer: FileAnswer) => {
          if ('error' in answer) return reject(answer.error);
          results[answer.index] = takeOverFile(answer.read, env);
          if (--pending === 0) resolve();
          else give(worker);
        });
        worker.on('error', reject);
        worker.on('exit', (code) => {
          if (code !== 0 && pending > 0) reject(new Error(`a desired-state reader thread stopped (exit code ${code})`));
        });
        give(worker);
      }
    });
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return results;
}

/** A file's part with its declarations' locations made again on this thread. */
function takeOverFile({ parseDiagnostics, reads }: FileRead, env: Environment): FilePart {
  return {
    parseDiagnostics,
    reads: reads.map(({ diagnostics, warnings, declarations }) => ({
      diagnostics,
      warnings,
      ...(declarations ? { declarations: takeOver(declarations, env) } : {}),
    })),
  };
}
