/**
 * A worker thread of src/desired/parallel.ts: parses the files it is given and reads their
 * documents (schema and reader), answering with plain data. Nothing is printed here.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { handOver } from './document.js';
import type { FileAnswer, FileJob, FileRead } from './parallel.js';
import { readOneDocument } from './pipeline.js';
import type { ParsedDocument } from './positions.js';
import type { Environment } from './secrets.js';
import { parseYamlInto } from './yaml.js';

const { env } = workerData as { env: Environment };

async function readFile({ text, file }: FileJob): Promise<FileRead> {
  const documents: ParsedDocument[] = [];
  const parseDiagnostics: FileRead['parseDiagnostics'] = [];
  await parseYamlInto(text, file, documents, parseDiagnostics);
  const reads: FileRead['reads'] = [];
  for (let i = 0; i < documents.length; i++) {
    const document = documents[i]!;
    documents[i] = undefined as unknown as ParsedDocument;
    const { diagnostics, warnings, declarations } = readOneDocument(document, env);
    reads.push({ diagnostics, warnings, ...(declarations ? { declarations: handOver(declarations) } : {}) });
  }
  return { parseDiagnostics, reads };
}

parentPort!.on('message', (job: FileJob) => {
  readFile(job).then(
    (read) => parentPort!.postMessage({ index: job.index, read } satisfies FileAnswer),
    (error: unknown) =>
      parentPort!.postMessage({
        index: job.index,
        error: error instanceof Error ? error : new Error(String(error)),
      } satisfies FileAnswer),
  );
});
