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
      'src/desired/generated/',
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
    // Tests read untyped JSON answers and match ANSI colour escapes on purpose.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-control-regex': 'off' },
  },
);
