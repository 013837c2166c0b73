/**
 * Unit tests of the front end (npm test): TypeScript through ts-jest, in jsdom. The server API
 * and JupyterLab's services are mocked in each test, as JupyterLab's extension examples do, so
 * the tests need neither a Jupyter server nor a browser.
 */
module.exports = {
  testEnvironment: 'jsdom',
  // @jupyterlab/translation ships ES modules only: ts-jest compiles it to CommonJS too.
  transform: { '^.+\\.[jt]sx?$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] },
  transformIgnorePatterns: ['/node_modules/(?!@jupyterlab/translation/)'],
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  setupFiles: ['<rootDir>/test/polyfills.ts'],
  // The cell metadata schema lives in the Python package; the build copies it into src/.
  moduleNameMapper: {
    '^\\./cell_metadata\\.schema\\.json$': '<rootDir>/../graphlab/course/cell_metadata.schema.json'
  }
};
