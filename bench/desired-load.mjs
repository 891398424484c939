#!/usr/bin/env node
/**
 * Desired-state load: how long reading one large YAML desired-state file takes, phase by phase,
 * and how much memory it needs. The file has the shape bench/plan-scale.mjs plans against
 * (10,000 users, 20,000 devices, 30,000 rules, about 5 MB).
 *
 *   npx tsc -p . && node bench/desired-load.mjs [--runs N] [--baseline COMMIT] [--yaml]
 *   node bench/desired-load.mjs --write-files DIR   (the files only, for profiling:
 *     node --cpu-prof bench/desired-load.mjs --child phases dist DIR/netform.yaml)
 *
 * Each measurement runs in a fresh Node process, so that its peak RSS is its own. Three files are
 * loaded: the clean one (what `plan` reads every day); the same file with about 1,000 mistakes in
 * it (schema errors, model errors, duplicates, overlaps), because the loader must stay fast when it
 * has positions to report; and the clean file with one YAML anchor in it (aliases resolved, the
 * positions still right).
 *
 * --baseline COMMIT builds that commit (git archive + tsc, in a temporary folder) and measures it
 * in turns with the current dist/, so before/after figures come from one run on the same machine
 * load; the bench also checks that both give the same result (DesiredState with its source
 * locations, or the same diagnostics), byte for byte.
 *
 * --yaml adds timings of the parsers alone on the clean file: the `yaml` package (parse,
 * parseDocument, Parser + Composer, toJS) and js-yaml 4 with the core schema (plain, with a
 * listener, and as src/desired/yaml.ts uses it), to tell the library's share from ours.
 *
 * The files come from bench/scale-data.mjs (model() and desiredYaml(), as bench/plan-scale.mjs
 * uses them), imported in the parent only, so that a measuring child loads nothing else.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1];
};

// ---------------------------------------------------------------- child: one measurement

/** The loader's modules from one build (`dist` folder). */
async function modulesOf(dist) {
  const at = (p) => import(pathToFileURL(join(dist, 'src/desired', p)).href);
  return {
    index: await at('index.js'),
    yaml: await at('yaml.js'),
    schema: await at('schema.js'),
    document: await at('document.js'),
    merge: await at('merge.js'),
    // check.js in builds from before the checks were split by job.
    check: await at(existsSync(join(dist, 'src/desired/check/state.js')) ? 'check/state.js' : 'check.js'),
  };
}

const rssMb = () => Math.round(process.memoryUsage.rss() / 1048576);
const peakMb = () => Math.round(process.resourceUsage().maxRSS / 1024);

/** What the loader gave, as text: compared across builds to prove they agree. */
function digestOf(result) {
  return createHash('sha256').update(JSON.stringify(result)).digest('hex').slice(0, 16);
}

/**
 * The phases of loadYamlFiles (src/desired/index.ts) for one file, timed one by one. Kept to the
 * functions both old and new builds export, with the same calls index.ts makes.
 */
async function measurePhases(m, file) {
  const env = {};
  const shown = m.index.displayPath(file);
  const times = {};
  const rss = {};
  let t = performance.now();
  const text = readFileSync(file, 'utf8');
  const parsed = await m.yaml.parseYamlFile(text, shown);
  times.parse = performance.now() - t;
  rss.parse = rssMb();

  t = performance.now();
  const schemas = parsed.documents.map((d) => m.schema.checkSchema(d));
  times.schema = performance.now() - t;
  rss.schema = rssMb();

  t = performance.now();
  const declarations = parsed.documents.map((d, i) => m.document.readDocument(d, schemas[i], env));
  const merged = m.merge.mergeDeclarations(declarations, [shown]);
  times.declarations = performance.now() - t;
  rss.declarations = rssMb();

  t = performance.now();
  const diagnostics = m.check.checkDesiredState(merged.state);
  times.checks = performance.now() - t;
  rss.checks = rssMb();
  const count =
    parsed.diagnostics.length +
    schemas.reduce((n, s) => n + s.diagnostics.length, 0) +
    declarations.reduce((n, d) => n + d.diagnostics.length, 0) +
    merged.diagnostics.length +
    diagnostics.length;
  return { times, rss, peak: peakMb(), diagnostics: count };
}

/** loadDesiredState as the CLI calls it. */
async function measureLoad(m, file) {
  const t = performance.now();
  const result = await m.index.loadDesiredState(file, { env: {} });
  const ms = performance.now() - t;
  const rss = rssMb();
  return {
    ms,
    rss,
    peak: peakMb(),
    ok: result.ok,
    diagnostics: result.ok ? 0 : result.diagnostics.length,
    digest: digestOf(result),
  };
}

/** The yaml package alone. */
async function measureYaml(file) {
  const yaml = await import('yaml');
  const text = readFileSync(file, 'utf8');
  const time = (fn) => {
    const t = performance.now();
    const value = fn();
    return { ms: performance.now() - t, value };
  };
  const out = {};
  out.parse = time(() => yaml.parse(text, { uniqueKeys: true })).ms;
  out.parseDocument = time(() =>
    yaml.parseDocument(text, { lineCounter: new yaml.LineCounter(), prettyErrors: true, uniqueKeys: true }),
  ).ms;
  out.parseDocumentPlain = time(() => yaml.parseDocument(text, { prettyErrors: false, keepSourceTokens: false })).ms;
  const docs = time(() =>
    yaml.parseAllDocuments(text, { lineCounter: new yaml.LineCounter(), prettyErrors: true, uniqueKeys: true }),
  );
  out.parseAllDocuments = docs.ms;
  const doc = Array.isArray(docs.value) ? docs.value[0] : docs.value;
  out.toJS = time(() => doc.toJS({ maxAliasCount: 1000 })).ms;
  out.parserOnly = time(() => {
    let n = 0;
    for (const _ of new yaml.Parser().parse(text)) n++;
    return n;
  }).ms;
  out.parserComposer = time(() => [...new yaml.Composer().compose(new yaml.Parser().parse(text))]).ms;
  out.lexerOnly = time(() => {
    let n = 0;
    for (const _ of new yaml.Lexer().lex(text)) n++;
    return n;
  }).ms;
  out.JSONparse = time(() => JSON.parse(JSON.stringify(doc.toJS()))).ms;
  // The alternative: js-yaml 4 with the core schema, plain, with a listener that does nothing,
  // and as src/desired/yaml.ts uses it (listener recording every node's offsets).
  const jsyaml = (await import('js-yaml')).default;
  out.jsyamlLoad = time(() => jsyaml.load(text, { schema: jsyaml.CORE_SCHEMA })).ms;
  out.jsyamlLoadListener = time(() => jsyaml.load(text, { schema: jsyaml.CORE_SCHEMA, listener: () => {} })).ms;
  const { parseYamlFile } = await import(pathToFileURL(join(ROOT, 'dist/src/desired/yaml.js')).href);
  out.netformParseYamlFile = (
    await (async () => {
      const t = performance.now();
      await parseYamlFile(text, 'netform.yaml');
      return { ms: performance.now() - t };
    })()
  ).ms;
  out.peakRssMb = peakMb();
  return out;
}

if (process.argv[2] === '--child') {
  const [, , , mode, dist, file] = process.argv;
  const result =
    mode === 'yaml'
      ? await measureYaml(file)
      : mode === 'phases'
        ? await measurePhases(await modulesOf(dist), file)
        : await measureLoad(await modulesOf(dist), file);
  process.stdout.write(JSON.stringify(result));
  process.exit(0);
}

// ---------------------------------------------------------------- parent

function child(mode, dist, file) {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', mode, dist, file], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (r.status !== 0) throw new Error(`child ${mode} ${dist} failed (${r.status}):\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

/**
 * Builds COMMIT's sources into a temporary folder as `npm run build` would; returns its dist/. The
 * schema's validators are compiled ahead of time as the build does (when COMMIT has the script):
 * without them the loader compiles the schema with ajv at run time, and the baseline would pay
 * about 110 ms that the current build does not.
 */
function buildBaseline(commit, dir) {
  const tree = join(dir, 'baseline');
  execFileSync('mkdir', ['-p', tree]);
  const hasValidators =
    execFileSync('git', ['-C', ROOT, 'ls-tree', '--name-only', commit, 'scripts/schema-validators.mjs'], {
      encoding: 'utf8',
    }).trim() !== '';
  const paths = ['src', 'server', 'schemas', 'tsconfig.json', 'package.json', ...(hasValidators ? ['scripts'] : [])];
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive "${commit}" ${paths.join(' ')} | tar -x -C "${tree}"`]);
  symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
  // Other areas' type errors do not stop tsc from emitting; only the loader's files are used.
  spawnSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', tree], { stdio: 'ignore' });
  const dist = join(tree, 'dist');
  if (!existsSync(join(dist, 'src/desired/index.js')))
    throw new Error(`building ${commit} gave no dist/src/desired/index.js`);
  if (hasValidators) execFileSync(process.execPath, [join(tree, 'scripts/schema-validators.mjs')], { stdio: 'ignore' });
  return dist;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x) => x.toFixed(0);

const RUNS = Number(arg('--runs', '3'));
const baselineCommit = arg('--baseline', undefined);
const dir = mkdtempSync(join(tmpdir(), 'netform-desired-bench-'));
try {
  const builds = [];
  if (baselineCommit) {
    const commit = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', baselineCommit], {
      encoding: 'utf8',
    }).trim();
    builds.push({ name: `before (${commit})`, dist: buildBaseline(baselineCommit, dir) });
  }
  builds.push({ name: baselineCommit ? 'after (dist/)' : 'dist/', dist: resolve(ROOT, 'dist') });

  const scale = await import('./scale-data.mjs');
  const { desiredYaml, model } = scale;
  const m = model();
  const files = [
    { name: 'clean', path: join(dir, 'netform.yaml'), text: desiredYaml(m).text },
    { name: 'with ~1,000 mistakes', path: join(dir, 'faulty.yaml'), text: desiredYaml(m, { faults: true }).text },
  ];
  // One YAML anchor and its alias: the loader must resolve them and still place every value.
  const anchored = files[0].text.replace('    role: admin\n', '    role: &admin admin\n');
  files.push({ name: 'clean with one anchor', path: join(dir, 'anchor.yaml'), text: anchored });
  for (const f of files) writeFileSync(f.path, f.text);
  const keep = arg('--write-files', undefined);
  if (keep) {
    // For profiling: node --cpu-prof bench/desired-load.mjs --child phases dist KEEP/netform.yaml
    for (const f of files) writeFileSync(join(keep, f.path.split('/').pop()), f.text);
    console.log(`wrote ${files.map((f) => join(keep, f.path.split('/').pop())).join(', ')}`);
  } else {
    console.log(measure(builds, files, scale).join('\n'));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** Every build on every file, RUNS times in turns; the report's lines. */
function measure(builds, files, { USERS, DEVICES, RULES }) {
  const results = builds.map(() => files.map(() => ({ phases: [], loads: [] })));
  for (let run = 0; run < RUNS; run++) {
    // In turns, so that the machine's load falls on every build alike.
    for (const [fi, f] of files.entries()) {
      for (const [bi, b] of builds.entries()) {
        results[bi][fi].phases.push(child('phases', b.dist, f.path));
        results[bi][fi].loads.push(child('load', b.dist, f.path));
      }
    }
  }

  const lines = [];
  lines.push(
    `Files: ${files.map((f) => `${f.name} ${(f.text.length / 1e6).toFixed(1)} MB`).join('; ')}. ${USERS.toLocaleString('en')} users, ${DEVICES.toLocaleString('en')} devices, ${RULES.toLocaleString('en')} rules; ${RUNS} run(s), each in a fresh process; medians.`,
  );
  for (const [fi, f] of files.entries()) {
    lines.push(
      '',
      `**${f.name}** (${results[0][fi].loads[0].ok ? 'loads' : `${results[0][fi].loads[0].diagnostics} diagnostics`})`,
      '',
    );
    lines.push(`| | ${builds.map((b) => b.name).join(' | ')}${builds.length > 1 ? ' | ratio |' : ' |'}`);
    lines.push(`|---|${builds.map(() => '---|').join('')}${builds.length > 1 ? '---|' : ''}`);
    const row = (label, pick, unit = '') => {
      const values = builds.map((_, bi) => median(pick(results[bi][fi])));
      const ratio = builds.length > 1 ? ` | ${(values[0] / values[1]).toFixed(1)}× |` : ' |';
      lines.push(`| ${label} | ${values.map((v) => `${fmt(v)}${unit}`).join(' | ')}${ratio}`);
    };
    row('YAML parse (ms)', (r) => r.phases.map((p) => p.times.parse));
    row('schema check (ms)', (r) => r.phases.map((p) => p.times.schema));
    row('declarations (ms)', (r) => r.phases.map((p) => p.times.declarations));
    row('domain checks (ms)', (r) => r.phases.map((p) => p.times.checks));
    row('loadDesiredState, whole (ms)', (r) => r.loads.map((l) => l.ms));
    row('RSS after parse (MB)', (r) => r.phases.map((p) => p.rss.parse));
    row('peak RSS, loadDesiredState (MB)', (r) => r.loads.map((l) => l.peak));
    for (const [bi, b] of builds.entries()) {
      lines.push(`| runs of ${b.name}, whole (ms) | ${results[bi][fi].loads.map((l) => fmt(l.ms)).join(' / ')} |`);
    }
    const digests = new Set(builds.flatMap((_, bi) => results[bi][fi].loads.map((l) => l.digest)));
    lines.push(
      '',
      digests.size === 1
        ? `Same result from every build and run (digest ${[...digests][0]}).`
        : `RESULTS DIFFER between builds: ${[...digests].join(', ')}`,
    );
    if (digests.size !== 1) process.exitCode = 1;
  }

  if (process.argv.includes('--yaml')) {
    const y = [];
    for (let run = 0; run < RUNS; run++) y.push(child('yaml', '', files[0].path));
    lines.push('', '`yaml` package alone on the clean file (ms, median):', '');
    lines.push('| call | ms |', '|---|---|');
    for (const k of Object.keys(y[0])) lines.push(`| ${k} | ${fmt(median(y.map((r) => r[k])))} |`);
  }
  return lines;
}
