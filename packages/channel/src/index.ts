// The OpenZiti channel protocol (V2 framing, header encodings, request/reply, heartbeats, hello)
// and the protobuf messages routers and the controller exchange (`ctrlPb`, `edgeCtrlPb`, `metricsPb`).
export * from './errors.js';
export * from './frame.js';
export * from './headers.js';
export * from './constants.js';
export * from './channel.js';
export * from './hello.js';
export * as ctrlPb from './gen/openziti/ctrl_pb/ctrl.js';
export * as edgeCtrlPb from './gen/openziti/edge_ctrl_pb/edge_ctrl.js';
export * as metricsPb from './gen/openziti/metrics_pb/ziti_metrics.js';
