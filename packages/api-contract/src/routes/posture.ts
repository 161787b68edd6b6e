import { Type } from '@sinclair/typebox';
import { CreateEnvelope, Empty } from '../models/common.js';
import {
  DetailPostureCheckEnvelope,
  DetailPostureCheckTypeEnvelope,
  FailedServiceRequestEnvelope,
  ListPostureCheckEnvelope,
  ListPostureCheckTypesEnvelope,
  ListRoleAttributeUsageEnvelope,
  ListRoleAttributesEnvelope,
  PostureCheckCreate,
  PostureCheckPatch,
  PostureCheckUpdate,
  PostureDataEnvelope,
  PostureResponseBulk,
  PostureResponseCreate,
  PostureResponseEnvelope,
} from '../models/posture.js';
import { type RouteDef, route } from '../route.js';

const CLIENT = ['client'] as const;
const MANAGEMENT = ['management'] as const;
const owner = 'posture' as const;
const listQuery = {
  limit: Type.Optional(Type.Integer()),
  offset: Type.Optional(Type.Integer()),
  filter: Type.Optional(Type.String()),
};
const checks = { apis: MANAGEMENT, owner, access: 'management', permission: 'posture-check', tags: ['Posture Checks'] } as const;

/** Operations served by the posture context. */
export const POSTURE_ROUTES: readonly RouteDef[] = [
  // ---- posture check types (any authenticated caller, as the controller's IsAuthenticated)
  route({
    operationId: 'listPostureCheckTypes', method: 'GET', path: '/posture-check-types', apis: MANAGEMENT, owner,
    access: 'authenticated', tags: ['Posture Checks'], summary: 'List a subset of posture check types',
    query: Type.Object(listQuery), success: { status: 200, schema: ListPostureCheckTypesEnvelope },
  }),
  route({
    operationId: 'detailPostureCheckType', method: 'GET', path: '/posture-check-types/{id}', apis: MANAGEMENT, owner,
    access: 'authenticated', tags: ['Posture Checks'], summary: 'Retrieves a single posture check type',
    success: { status: 200, schema: DetailPostureCheckTypeEnvelope },
  }),

  // ---- posture checks
  route({
    ...checks, operationId: 'listPostureChecks', method: 'GET', path: '/posture-checks', summary: 'List a subset of posture checks',
    query: Type.Object({
      ...listQuery,
      roleFilter: Type.Optional(Type.Array(Type.String(), { collectionFormat: 'multi' })),
      roleSemantic: Type.Optional(Type.String()),
    }),
    success: { status: 200, schema: ListPostureCheckEnvelope },
  }),
  route({
    ...checks, operationId: 'createPostureCheck', method: 'POST', path: '/posture-checks', summary: 'Creates a Posture Checks',
    body: PostureCheckCreate, success: { status: 201, schema: CreateEnvelope },
  }),
  route({
    ...checks, operationId: 'detailPostureCheck', method: 'GET', path: '/posture-checks/{id}', summary: 'Retrieves a single Posture Checks',
    success: { status: 200, schema: DetailPostureCheckEnvelope },
  }),
  route({
    ...checks, operationId: 'updatePostureCheck', method: 'PUT', path: '/posture-checks/{id}', summary: 'Update all fields on a Posture Checks',
    body: PostureCheckUpdate, success: { status: 200, schema: Empty },
  }),
  route({
    ...checks, operationId: 'patchPostureCheck', method: 'PATCH', path: '/posture-checks/{id}',
    summary: 'Update the supplied fields on a Posture Checks', body: PostureCheckPatch, success: { status: 200, schema: Empty },
  }),
  route({
    ...checks, operationId: 'deletePostureCheck', method: 'DELETE', path: '/posture-checks/{id}', summary: 'Deletes an Posture Checks',
    success: { status: 200, schema: Empty },
  }),

  // ---- role attributes of posture checks
  route({
    ...checks, operationId: 'listPostureCheckRoleAttributes', method: 'GET', path: '/posture-check-role-attributes', tags: ['Role Attributes'],
    summary: 'List role attributes in use by posture checks', query: Type.Object(listQuery),
    success: { status: 200, schema: ListRoleAttributesEnvelope },
  }),
  route({
    ...checks, operationId: 'listPostureCheckRoleAttributeUsage', method: 'GET', path: '/posture-check-role-attribute-usage',
    tags: ['Role Attributes'], summary: 'List posture check role attributes with usage breakdowns',
    query: Type.Object({ ...listQuery, withIds: Type.Optional(Type.Boolean()) }),
    success: { status: 200, schema: ListRoleAttributeUsageEnvelope },
  }),

  // ---- an identity's posture (management)
  route({
    operationId: 'getIdentityPostureData', method: 'GET', path: '/identities/{id}/posture-data', apis: MANAGEMENT, owner,
    access: 'management', permission: 'identity', tags: ['Identity'],
    summary: 'Retrieve the curent posture data for a specific identity.',
    success: { status: 200, schema: PostureDataEnvelope },
  }),
  route({
    operationId: 'getIdentityFailedServiceRequests', method: 'GET', path: '/identities/{id}/failed-service-requests', apis: MANAGEMENT,
    owner, access: 'management', permission: 'identity', tags: ['Identity'],
    summary: 'Retrieve a list of the most recent service failure requests due to posture checks',
    success: { status: 200, schema: FailedServiceRequestEnvelope },
  }),

  // ---- posture responses (client)
  route({
    operationId: 'createPostureResponse', method: 'POST', path: '/posture-response', apis: CLIENT, owner, access: 'authenticated',
    tags: ['Posture Checks'], summary: 'Submit a posture response to a posture query', body: PostureResponseCreate,
    success: { status: 201, schema: PostureResponseEnvelope },
  }),
  route({
    operationId: 'createPostureResponseBulk', method: 'POST', path: '/posture-response-bulk', apis: CLIENT, owner,
    access: 'authenticated', tags: ['Posture Checks'], summary: 'Submit multiple posture responses', body: PostureResponseBulk,
    success: { status: 200, schema: PostureResponseEnvelope },
  }),
];
