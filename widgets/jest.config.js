/**
 * Unit tests of the front end (npm test): TypeScript through ts-jest, in jsdom. The server API
 * and JupyterLab's services are mocked in each test, as JupyterLab's extension examples do, so
 * the tests need neither a Jupyter server nor a browser.
 */
module.exports = {
  testEnvironment: 'jsdom',
  transform: { '^.+\\.tsx?$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] },
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  // The cell metadata schema lives in the Python package; the build copies it into src/.
  moduleNameMapper: {
    '^\\./cell_metadata\\.schema\\.json$': '<rootDir>/../graphlab/course/cell_metadata.schema.json'
  }
};
