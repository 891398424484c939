/**
 * Which way the code's imports may point (ARCHITECTURE.md, "Dependency rules"), checked by
 * `npm run lint` with dependency-cruiser. Type-only imports are not dependencies at run time:
 * views and the command line may name any domain type.
 */
/** The domain folders, which ops runs: everything of `src/` but the entries, ops, views and cli. */
const DOMAIN_FOLDERS = ['access', 'apply', 'client', 'desired', 'drift', 'migrate', 'model', 'nft', 'plan', 'review'];
const DOMAIN = `^src/(${DOMAIN_FOLDERS.join('|')})/`;
const DOMAIN_BUT_MODEL = `^src/(${DOMAIN_FOLDERS.filter((folder) => folder !== 'model').join('|')})/`;
const TYPE_ONLY = ['type-only'];
/**
 * The words of the model's codes (a file that cannot be read, an instant or a tunnel block that is
 * refused): views of model values alone, which the domain folders that write diagnostics import.
 */
const MODEL_WORDS = '^src/views/model-[a-z-]+\\.ts$';
/**
 * The domain modules the command line imports at run time, by name: each checks a flag's value or
 * holds its default, or turns what the user gave into data where the command runs. The CLI takes
 * them from where they live; nothing else of the domain (the workflows are ops').
 */
const CLI_DOMAIN = [
  // explain FROM TO; reach USER and who-can-reach TO
  '^src/access/(notation|reach)\\.ts$',
  // --plan-max-age; the key that seals saved plans; plan -o writes the sealed plan
  '^src/plan/(age|seal|planfile)\\.ts$',
  // a -f path as messages show it; a saved plan's secrets, read where apply runs
  '^src/desired/(files|secrets)\\.ts$',
  // export's count of what it wrote
  '^src/desired/export/files\\.ts$',
  // --every and --timezone
  '^src/drift/cron\\.ts$',
  // nft --interface and its default
  '^src/nft/ruleset\\.ts$',
  // review --stale-days and --expiring-days defaults
  '^src/review/(report|expiries)\\.ts$',
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-runtime-cycle',
      comment: 'No file may reach itself again through imports that run (type-only imports aside).',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: TYPE_ONLY } },
    },
    {
      name: 'cli-is-the-top',
      comment:
        'Nothing outside src/cli imports it (the command line is a shell around the library), but the package entry, which exports run(argv, io) and its io.',
      severity: 'error',
      from: { pathNot: ['^src/cli/', '^src/index\\.ts$'] },
      to: { path: '^src/cli/' },
    },
    {
      name: 'package-entry-takes-run-only',
      comment: 'The package entry exports the command line as run(argv, io) (src/cli/run.ts, io.ts), nothing else of it.',
      severity: 'error',
      from: { path: '^src/index\\.ts$' },
      to: { path: '^src/cli/', pathNot: '^src/cli/(run|io)\\.ts$' },
    },
    {
      name: 'cli-uses-ops-and-views',
      comment:
        'A command turns flags into an ops request and its result into views: at run time it imports ops, views, model, the flag modules of CLI_DOMAIN and itself; the server only to serve or administer it.',
      severity: 'error',
      from: { path: '^src/cli/' },
      to: { path: DOMAIN, pathNot: ['^src/model/', ...CLI_DOMAIN], dependencyTypesNot: TYPE_ONLY },
    },
    {
      name: 'server-only-for-serve-and-server',
      comment: 'Only `netform serve` and `netform server` (and their flags) load the bundled server.',
      severity: 'error',
      from: { path: '^src/cli/', pathNot: '^src/cli/(commands/(serve|server)|flags/(serve|store))\\.ts$' },
      to: { path: '^server/', dependencyTypesNot: TYPE_ONLY },
    },
    {
      name: 'ops-below-views',
      comment: 'The workflows return data and raise OpErrors; they never format for people.',
      severity: 'error',
      from: { path: '^src/ops/' },
      to: { path: '^src/views/' },
    },
    {
      name: 'views-are-pure',
      comment: 'Views are functions of data: they import model (and each other), and domain types only.',
      severity: 'error',
      from: { path: '^src/views/' },
      to: {
        path: ['^src/ops/', DOMAIN_BUT_MODEL, '^server/'],
        dependencyTypesNot: TYPE_ONLY,
      },
    },
    {
      name: 'domain-below-workflows',
      comment: 'The domain folders know nothing of workflows, views or the command line.',
      severity: 'error',
      from: { path: DOMAIN },
      to: { path: '^src/(ops|views|cli)/', pathNot: MODEL_WORDS },
    },
    {
      name: 'model-words-are-views-of-the-model',
      comment:
        'The words of the model\'s codes (src/views/model-*.ts), which the domain may import, import only the model and each other (and, for types alone, the codes they word).',
      severity: 'error',
      from: { path: MODEL_WORDS },
      // Type-only imports of the codes they word (a target refused by src/plan/target.ts) load nothing.
      to: { path: ['^src/', '^server/'], pathNot: ['^src/model/', MODEL_WORDS], dependencyTypesNot: TYPE_ONLY },
    },
    {
      name: 'model-imports-nothing-of-ours',
      comment: 'The model is the vocabulary every folder shares: it imports no other folder of ours.',
      severity: 'error',
      from: { path: '^src/model/' },
      to: { path: ['^src/', '^server/'], pathNot: '^src/model/' },
    },
    {
      name: 'cdktf-entry-stands-alone',
      comment:
        'The netform/cdktf entry (src/cdktf) builds stacks from its generated constructs and the cdktf and constructs packages: of our other folders it may import only views (its words) and model.',
      severity: 'error',
      from: { path: '^src/cdktf/' },
      to: { path: ['^src/', '^server/'], pathNot: '^src/(cdktf|views|model)/' },
    },
    {
      name: 'only-the-cdktf-entry-loads-cdktf',
      comment:
        'Nothing else imports src/cdktf or the cdktf and constructs packages, not even for a type: reading a cdk.tf.json (src/desired/cdktf) needs neither package.',
      severity: 'error',
      from: { pathNot: '^src/cdktf/' },
      to: { path: ['^src/cdktf/', '(^|/)node_modules/(cdktf|constructs)/'] },
    },
    {
      name: 'server-shares-only-the-model',
      comment: 'The bundled server is a separate program that shares the model\'s rules only.',
      severity: 'error',
      from: { path: '^server/' },
      to: { path: '^src/', pathNot: '^src/(model/|version\\.ts$)', dependencyTypesNot: TYPE_ONLY },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: ['^src/', '^server/', '(^|/)node_modules/(cdktf|constructs)/'],
    exclude: { path: '^src/cdktf/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
