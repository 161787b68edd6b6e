import { conformanceProblems } from './http.js';
import { specStatus, validationStats } from './spec-validator.js';

/**
 * Makes every swagger conformance problem of the responses a test file received fail a test:
 * after each test (and after the file) the problems collected by the HTTP client since the last
 * check are reported and cleared. Problems from `beforeAll` are reported with the first test.
 * A no-op when the spec folder is absent; `conformance.test.ts` then says so.
 */
export function failOnConformanceProblems(): void {
  const flush = () => {
    const problems = conformanceProblems.splice(0);
    if (problems.length) {
      throw new Error(`swagger conformance failed for ${problems.length} response(s):\n  ${problems.join('\n  ')}`);
    }
  };
  afterEach(flush);
  afterAll(() => {
    if (process.env.ZITI_CONFORMANCE_STATS === '1') {
      const { checked, unchecked } = validationStats;
      console.info(`swagger conformance (${specStatus().checked ? 'on' : 'OFF'}): ${checked} response(s) checked; without a spec operation: ${[...new Set(unchecked)].join(', ') || 'none'}`);
    }
    flush();
  });
}
