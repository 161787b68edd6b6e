import { Type } from '@sinclair/typebox';
import { Meta, nullable } from './common.js';

/**
 * Models of the data integrity operations (`/database/check-data-integrity`,
 * `/database/fix-data-integrity`, `/database/data-integrity-results`), from the OpenZiti swagger
 * definitions of the same name. `startTime`, `endTime` and `error` are null where the controller
 * has no value (before a run, while one runs, after one without error), as it renders them.
 */

export const DataIntegrityCheckDetail = Type.Object(
  { description: Type.String(), fixed: Type.Boolean() },
  { $id: 'dataIntegrityCheckDetail' },
);

export const DataIntegrityCheckDetailList = Type.Array(DataIntegrityCheckDetail, { $id: 'dataIntegrityCheckDetailList' });

export const DataIntegrityCheckDetails = Type.Object(
  {
    endTime: nullable(Type.String({ format: 'date-time' })),
    error: nullable(Type.String()),
    fixingErrors: Type.Boolean(),
    inProgress: Type.Boolean(),
    results: DataIntegrityCheckDetailList,
    startTime: nullable(Type.String({ format: 'date-time' })),
    tooManyErrors: Type.Boolean(),
  },
  { $id: 'dataIntegrityCheckDetails' },
);

export const DataIntegrityCheckResultEnvelope = Type.Object(
  { data: DataIntegrityCheckDetails, meta: Meta },
  { $id: 'dataIntegrityCheckResultEnvelope' },
);

export const INTEGRITY_MODELS = {
  dataIntegrityCheckDetail: DataIntegrityCheckDetail,
  dataIntegrityCheckDetailList: DataIntegrityCheckDetailList,
  dataIntegrityCheckDetails: DataIntegrityCheckDetails,
  dataIntegrityCheckResultEnvelope: DataIntegrityCheckResultEnvelope,
};
