// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'coverage/',
      'test-results/',
      'src/cdktf/generated/',
      '**/cdktf.out/',
      '.netform/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // The command line stays a thin shell: a file per command, each short enough to read at once.
    // Its work belongs in src/ops and its words in src/views.
    files: ['src/cli/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 150, skipBlankLines: false, skipComments: false }] },
  },
  {
    // The command line is run(argv, io): it reads its streams, environment and folder from io
    // (src/cli/io.ts), never from the process, so that it runs in-process as well as the bin.
    // The bin (main.ts) and the process's io, signals and last-resort boundary (process.ts) excepted.
    files: ['src/cli/**/*.ts'],
    ignores: ['src/cli/main.ts', 'src/cli/process.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'The command line reads the process through io (src/cli/io.ts).' },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: ['process', 'node:process'].map((name) => ({
            name,
            // The process's memory, for the timings, is the same in-process or not.
            allowImportNames: ['memoryUsage', 'resourceUsage'],
            message: 'The command line reads the process through io (src/cli/io.ts).',
          })),
        },
      ],
    },
  },
  {
    // Tests read untyped JSON answers and match ANSI colour escapes on purpose.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-control-regex': 'off' },
  },
);
