// Lint: typescript-eslint's recommended rules, plus one rule per folder that keeps the arrows
// of DESIGN.md pointing inward (api → core → storage; core imports no transport or node: value;
// the protocol leaf imports nothing outside itself).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'src/*.bundle.mjs', 'src/*.chunk-*.mjs', 'proto/gen/**', 'src/gen/**', 'loadtest/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', URL: 'readonly', TextDecoder: 'readonly', TextEncoder: 'readonly', SharedArrayBuffer: 'readonly', Atomics: 'readonly', queueMicrotask: 'readonly', AbortController: 'readonly', fetch: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // Tests poke at JSON answers; `any` there is a convenience, not a module boundary.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['**/api/**', '**/native-free/**', '**/transport/**'], message: 'core/ never imports a transport (DESIGN.md).' },
        { group: ['@trufflesuite/*', '@grpc/*', 'uWebSockets.js', 'node:http', 'node:net'], message: 'core/ never imports a transport or SDK.' },
      ] }],
    },
  },
  {
    // The protocol leaf imports only its own files; test/build/protocol-leaf.test.ts checks the same
    // (and the client's side) on every form of import, this says it while the file is being written.
    files: ['src/protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { regex: '^(?!\\./)', message: 'src/protocol/ is the leaf: it imports only ./ files (no other folder of src/, no package, no node: module).' },
      ] }],
    },
  },
  {
    files: ['src/storage/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['**/core/**', '**/api/**'], message: 'storage/ never imports core/ or api/ (DESIGN.md).' },
      ] }],
    },
  },
);
