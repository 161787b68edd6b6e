import { emptyEnvelope } from '@ziti/errors';
import type { LocalHandler } from '../http/informational.js';
import type { IntegrityRunner } from './runner.js';

/** The gateway's handlers of the data integrity routes, by operationId (access `admin` is checked before them). */
export function integrityHandlers(runner: IntegrityRunner): Record<string, LocalHandler> {
  return {
    checkDataIntegrity: async () => {
      await runner.start(false);
      return { status: 202, body: emptyEnvelope() };
    },
    fixDataIntegrity: async () => {
      await runner.start(true);
      return { status: 202, body: emptyEnvelope() };
    },
    dataIntegrityResults: async () => ({ body: await runner.results() }),
  };
}
