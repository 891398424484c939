#!/usr/bin/env node
/**
 * Generates the CDKTF bindings in src/cdktf/generated/ from schemas/terraform-provider.json with
 * @cdktf/provider-generator, offline and without a Terraform binary.
 *
 *   node scripts/cdktf-generate.mjs [--out DIR]      (npm run generate:cdktf)
 *
 * The generated TypeScript uses extension-less imports, which only CommonJS resolution accepts,
 * so the folder gets a {"type":"commonjs"} package.json inside our ES-module package.
 */
import { mkdtemp, mkdir, readFile, rm, cp, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const schemaPath = join(root, 'schemas', 'terraform-provider.json');

function parseArgs(argv) {
  let out = join(root, 'src', 'cdktf', 'generated');
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out' && argv[i + 1]) out = resolve(argv[++i]);
    else {
      process.stderr.write(`usage: node scripts/cdktf-generate.mjs [--out DIR]\n`);
      process.exit(1);
    }
  }
  return { out };
}

const { out } = parseArgs(process.argv.slice(2));

// Set before the generator loads: no telemetry, and @cdktf/commons asks `terraform version` as it
// loads, which generation does not need; pointing it at no binary keeps the output independent of
// whatever Terraform the machine has.
process.env.CHECKPOINT_DISABLE = '1';
process.env.TERRAFORM_BINARY_NAME = join(root, 'node_modules', '.no-terraform-needed');

const require = createRequire(import.meta.url);
// The package's top-level entry needs jsii-pacmak (not installed); the provider generator alone does not.
const { TerraformProviderGenerator } = require('@cdktf/provider-generator/lib/get/generator/provider-generator');
const { CodeMaker } = require('codemaker');

/**
 * The generator writes overriding members without `override`, which our tsconfig's
 * noImplicitOverride rejects. Ask the compiler which members those are (errors 4114/4116) and add
 * the modifier there, so the bindings compile under the project's own settings.
 */
async function addOverrideModifiers(dir) {
  const ts = require('typescript');
  const configFile = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
  const files = ts.sys.readDirectory(dir, ['.ts'], undefined, ['**/*']).filter((f) => !f.endsWith('.d.ts'));
  const program = ts.createProgram(files, { ...options, noEmit: true });
  const linesByFile = new Map();
  for (const d of ts.getPreEmitDiagnostics(program)) {
    if (!d.file || (d.code !== 4114 && d.code !== 4116)) continue;
    const { line } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
    if (!linesByFile.has(d.file.fileName)) linesByFile.set(d.file.fileName, new Set());
    linesByFile.get(d.file.fileName).add(line);
  }
  for (const [file, lines] of linesByFile) {
    const text = (await readFile(file, 'utf8')).split('\n');
    for (const line of lines) {
      text[line] = text[line].replace(/^(\s*(?:public |protected |private )?)/, '$1override ');
    }
    await writeFile(file, text.join('\n'));
  }
}

const schema = JSON.parse(await readFile(schemaPath, 'utf8'));
// Staged inside the project, so that the compiler resolves `cdktf` and `constructs` from our
// node_modules wherever --out points.
const cache = join(root, 'node_modules', '.cache');
await mkdir(cache, { recursive: true });
const staging = await mkdtemp(join(cache, 'netform-cdktf-generate-'));
try {
  const generator = new TerraformProviderGenerator(new CodeMaker(), schema);
  generator.generateAll();
  await generator.save(staging);
  await writeFile(join(staging, 'package.json'), JSON.stringify({ type: 'commonjs' }, null, 2) + '\n');
  await addOverrideModifiers(staging);

  await mkdir(out, { recursive: true });
  await rm(join(out, 'providers'), { recursive: true, force: true });
  await cp(join(staging, 'providers'), join(out, 'providers'), { recursive: true });
  await cp(join(staging, 'package.json'), join(out, 'package.json'));
  process.stdout.write(`generated CDKTF bindings from ${schemaPath} into ${out}\n`);
} finally {
  await rm(staging, { recursive: true, force: true });
}
