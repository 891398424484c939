/**
 * The stamp of the sources a build was made from: a SHA-256 over the path and content of every
 * file under src/ and server/ (and the schemas the build turns into validators), written into
 * dist/ by `npm run build`. Tests that run dist/ compare it with the sources they see, so a stale
 * build is refused by name instead of silently testing old code. Content, not mtimes: a checkout
 * or `touch` changes no stamp; an edit does.
 *
 *   node scripts/source-stamp.mjs write   (after tsc, in npm run build)
 *   node scripts/source-stamp.mjs check   (exit 1 when dist/ is stale)
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join(ROOT, 'dist', 'source-stamp.txt');
const SOURCES = ['src', 'server', 'schemas'];

function* filesUnder(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(path);
    else if (entry.isFile()) yield path;
  }
}

/** The hash of the sources as they are now. */
export function sourceStamp(root = ROOT) {
  const hash = createHash('sha256');
  const files = SOURCES.flatMap((dir) => (existsSync(join(root, dir)) ? [...filesUnder(join(root, dir))] : []))
    .map((path) => relative(root, path).split(sep).join('/'))
    .sort();
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Why dist/ cannot be tested as the sources are, or null when it can. */
export function staleBuild(root = ROOT) {
  const stamp = join(root, 'dist', 'source-stamp.txt');
  if (!existsSync(stamp))
    return 'dist/ has no source stamp (built by an older netform, or not built): run npm run build';
  if (readFileSync(stamp, 'utf8').trim() !== sourceStamp(root))
    return 'dist/ was built from other sources than src/ and server/ hold now: run npm run build';
  return null;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const mode = process.argv[2];
  if (mode === 'write') writeFileSync(STAMP, `${sourceStamp()}\n`);
  else if (mode === 'check') {
    const why = staleBuild();
    if (why) {
      process.stderr.write(`${why}\n`);
      process.exit(1);
    }
  } else {
    process.stderr.write('usage: node scripts/source-stamp.mjs write|check\n');
    process.exit(2);
  }
}
