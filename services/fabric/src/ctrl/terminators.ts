import { ctrlPb, edgeCtrlPb, encodeBool, encodeString, encodeUint32 } from '@ziti/channel';
import { ApiError } from '@ziti/errors';
import type { Peers } from '../grpc/peers.js';
import { EdgeErrorCode, CT, H } from './ids.js';
import type { Message, RouterChannel } from './port.js';
import { SessionRefusal, type SessionValidator } from './tokens.js';

const { CreateTerminatorResult, CreateTerminatorV2Request, CreateTerminatorV2Response, RemoveTerminatorRequest, UpdateTerminatorRequest, TerminatorPrecedence } = edgeCtrlPb;
const { RemoveTerminatorsRequest } = ctrlPb;
type CreateTerminatorResult = edgeCtrlPb.CreateTerminatorResult;

const MAX_COST = 65535;
const PRECEDENCE = { [TerminatorPrecedence.Required]: 'required', [TerminatorPrecedence.Failed]: 'failed' } as Record<number, string>;
const precedenceName = (p: number) => PRECEDENCE[p] ?? 'default';

/** An edge Error (20002) answering `to`. */
export function sendEdgeError(ch: RouterChannel, to: Message, message: string, code: number, circuitId?: string): void {
  const headers = new Map<number, Buffer>([[H.ErrorCode, encodeUint32(code)]]);
  if (circuitId) headers.set(H.CircuitId, encodeString(circuitId));
  ch.reply(to, CT.Error, Buffer.from(message, 'utf8'), headers);
}

/** The edge error code of a refusal. */
export function refusalCode(err: unknown): number {
  if (!(err instanceof SessionRefusal)) return EdgeErrorCode.Internal;
  switch (err.code) {
    case 'INVALID_API_SESSION':
      return EdgeErrorCode.InvalidApiSession;
    case 'INVALID_SESSION':
      return EdgeErrorCode.InvalidSession;
    case 'WRONG_TYPE':
      return EdgeErrorCode.WrongSessionType;
    case 'NO_ACCESS':
      return EdgeErrorCode.InvalidEdgeRouterForSession;
    case 'NOT_FOUND':
      return EdgeErrorCode.InvalidService;
  }
}

const peerDataOf = (m: { [k: number]: Buffer }) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));

/**
 * Hosting SDKs' terminators through their router (OpenZiti `create_terminator_v2.go`,
 * `update_terminator.go`, `remove_terminator.go`, `remove_terminators.go`): the session checks of
 * a Bind, then policy stores the terminator.
 */
export function handleTerminators(ch: RouterChannel, routerId: string, peers: Peers, sessions: SessionValidator, problem: (m: string, err?: unknown) => void): void {
  ch.handle(CT.CreateTerminatorV2Request, async (m) => {
    const req = CreateTerminatorV2Request.decode(m.body);
    const answer = (result: CreateTerminatorResult, msg = '', errorCode = 0): void =>
      void ch.reply(m, CT.CreateTerminatorV2Response, CreateTerminatorV2Response.encode({ terminatorId: req.address, result, msg, errorCode, retryHint: 0 }).finish());
    if (!req.address || req.address.length > 256) return answer(CreateTerminatorResult.FailedOther, 'terminator address is required', EdgeErrorCode.InvalidTerminator);
    if (req.cost > MAX_COST) return answer(CreateTerminatorResult.FailedOther, `cost must be at most ${MAX_COST}`, EdgeErrorCode.InvalidCost);
    try {
      const s = await sessions.validate({ apiSessionToken: req.apiSessionToken, sessionToken: req.sessionToken, routerId, type: 'Bind' });
      await peers.upsertEdgeTerminator({
        id: req.address,
        serviceId: s.serviceId,
        routerId,
        hostId: s.identityId,
        instanceId: req.instanceId.slice(0, 256),
        instanceSecret: Buffer.from(req.instanceSecret).toString('base64'),
        cost: req.cost,
        precedence: precedenceName(req.precedence),
        peerData: peerDataOf(req.peerData),
      });
      answer(CreateTerminatorResult.Success);
    } catch (err) {
      if (err instanceof SessionRefusal) return answer(CreateTerminatorResult.FailedInvalidSession, err.message, refusalCode(err));
      if (err instanceof ApiError && err.code === 'NOT_FOUND') return answer(CreateTerminatorResult.FailedOther, 'service not found', EdgeErrorCode.InvalidService);
      if (err instanceof ApiError && err.status === 409) return answer(CreateTerminatorResult.FailedIdConflict, 'terminator id conflict', EdgeErrorCode.InvalidTerminator);
      if (err instanceof ApiError && (err.code as string) === 'ID_CONFLICT') return answer(CreateTerminatorResult.FailedIdConflict, 'terminator id conflict', EdgeErrorCode.InvalidTerminator);
      problem(`fabric: router ${routerId}: terminator ${req.address} not created`, err);
      answer(CreateTerminatorResult.FailedBusy, 'terminator not created, try again', EdgeErrorCode.Internal);
    }
  });

  ch.handle(CT.UpdateTerminatorRequest, async (m) => {
    const req = UpdateTerminatorRequest.decode(m.body);
    try {
      if (req.updateCost && req.cost > MAX_COST) return void sendEdgeError(ch, m, `cost must be at most ${MAX_COST}`, EdgeErrorCode.InvalidCost);
      await sessions.validate({ apiSessionToken: req.apiSessionToken, sessionToken: req.sessionToken, routerId, type: 'Bind' });
      await peers.updateTerminator({
        id: req.terminatorId,
        routerId,
        updateCost: req.updateCost,
        cost: req.cost,
        updatePrecedence: req.updatePrecedence,
        precedence: precedenceName(req.precedence),
      });
      ch.reply(m, CT.UpdateTerminatorResponse);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'NOT_FOUND') return void sendEdgeError(ch, m, 'terminator not found', EdgeErrorCode.InvalidTerminator);
      sendEdgeError(ch, m, err instanceof SessionRefusal ? err.message : 'terminator not updated', refusalCode(err));
    }
  });

  ch.handle(CT.RemoveTerminatorRequest, async (m) => {
    const req = RemoveTerminatorRequest.decode(m.body);
    try {
      await sessions.validate({ apiSessionToken: req.apiSessionToken, sessionToken: req.sessionToken, routerId, type: 'Bind' });
      await peers.removeTerminators({ routerId, terminatorIds: [req.terminatorId], allEdge: false });
      ch.reply(m, CT.RemoveTerminatorResponse);
    } catch (err) {
      sendEdgeError(ch, m, err instanceof SessionRefusal ? err.message : 'terminator not removed', refusalCode(err));
    }
  });

  ch.handle(CT.RemoveTerminators, async (m) => {
    const req = RemoveTerminatorsRequest.decode(m.body);
    const ids = req.terminatorIds.filter((id: string) => id.length > 0 && id.length <= 256).slice(0, 10_000);
    try {
      if (ids.length > 0) await peers.removeTerminators({ routerId, terminatorIds: ids, allEdge: false });
      ch.reply(m, CT.Result, undefined, new Map([[H.ResultSuccess, encodeBool(true)]]));
    } catch (err) {
      problem(`fabric: router ${routerId}: terminators not removed`, err);
      ch.reply(m, CT.Result, Buffer.from('terminators not removed'), new Map([[H.ResultSuccess, encodeBool(false)]]));
    }
  });
}
