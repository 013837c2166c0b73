// Lint for the front end (npm run lint): eslint's and typescript-eslint's recommended rules,
// JupyterLab's naming of interfaces (IName), and no style rules: prettier owns the layout.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['lib/', 'node_modules/', '*.js', '*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/naming-convention': [
        'error',
        { selector: 'interface', format: ['PascalCase'], prefix: ['I'] }
      ],
      '@typescript-eslint/no-unused-vars': ['error', { args: 'none' }],
      // JupyterLab's own style: command ids grouped in a namespace.
      '@typescript-eslint/no-namespace': 'off',
      curly: ['error', 'all'],
      eqeqeq: 'error'
    }
  },
  prettier
);
