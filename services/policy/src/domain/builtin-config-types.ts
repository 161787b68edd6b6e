import type { NewConfigType } from './ports.js';

/**
 * The config types every controller has from its first start (reference §6.10, DB version 48),
 * with their fixed ids and the JSON schemas of OpenZiti's `controller/db/migration_initialize.go`
 * (not `host-interfaces.v1`, which only old migrations created). Built as the original composes
 * them: shared health-check and tunnel definitions combined into each schema.
 */

type Json = Record<string, unknown>;

/** Merges maps, refusing duplicate keys (as the original's `combine`). */
function combine(...maps: Json[]): Json {
  const out: Json = {};
  for (const m of maps) {
    for (const [k, v] of Object.entries(m)) {
      if (k in out) throw new Error(`duplicate key '${k}' in merged maps`);
      out[k] = v;
    }
  }
  return out;
}

const MAX_UINT16 = 65535;
const MAX_INT32 = 2147483647;

const healthCheckDefinitions: Json = {
  duration: { type: 'string', pattern: '[0-9]+(h|m|s|ms)' },
  method: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH'] },
  action: {
    type: 'object',
    additionalProperties: false,
    required: ['trigger', 'action'],
    properties: {
      trigger: { type: 'string', enum: ['fail', 'pass', 'change'] },
      consecutiveEvents: { type: 'integer', minimum: 0, maximum: MAX_UINT16 },
      duration: { $ref: '#/definitions/duration' },
      action: { type: 'string', pattern: '(mark (un)?healthy|increase cost [0-9]+|decrease cost [0-9]+|send event)' },
    },
  },
  actionList: { type: 'array', items: { $ref: '#/definitions/action' }, minItems: 1, maxItems: 20 },
  portCheck: {
    type: 'object',
    additionalProperties: false,
    required: ['interval', 'timeout', 'address'],
    properties: {
      interval: { $ref: '#/definitions/duration' },
      timeout: { $ref: '#/definitions/duration' },
      address: { type: 'string' },
      actions: { $ref: '#/definitions/actionList' },
    },
  },
  httpCheck: {
    type: 'object',
    additionalProperties: false,
    required: ['interval', 'timeout', 'url'],
    properties: {
      url: { type: 'string' },
      method: { $ref: '#/definitions/method' },
      body: { type: 'string' },
      interval: { $ref: '#/definitions/duration' },
      timeout: { $ref: '#/definitions/duration' },
      actions: { $ref: '#/definitions/actionList' },
      expectStatus: { type: 'integer', minimum: 100, maximum: 599 },
      expectInBody: { type: 'string' },
    },
  },
  portCheckList: { type: 'array', items: { $ref: '#/definitions/portCheck' } },
  httpCheckList: { type: 'array', items: { $ref: '#/definitions/httpCheck' } },
};

const healthCheckProperties: Json = {
  portChecks: { $ref: '#/definitions/portCheckList' },
  httpChecks: { $ref: '#/definitions/httpCheckList' },
};

const tunnelDefinitions: Json = {
  dialAddress: { type: 'string', format: 'idn-hostname', not: { pattern: '^$' } },
  listenAddress: {
    type: 'string',
    format: 'idn-hostname',
    not: { pattern: '^$' },
    description:
      "idn-hostname allows ipv4 and ipv6 addresses, as well as hostnames that might happen to contain '*' and/or '/'. so idn-hostname allows every supported intercept address, although ip addresses, wildcards and cidrs are only being validated as hostnames by this format. client applications will need to look for _valid_ ips, cidrs, and wildcards when parsing intercept addresses and treat them accordingly. anything else should be interpreted as a dns label. this means e.g. that '1.2.3.4/56' should be treated as a dns label, since it is not a valid cidr",
  },
  inhabitedSet: { type: 'array', minItems: 1, uniqueItems: true },
  portNumber: { type: 'integer', minimum: 0, maximum: MAX_UINT16 },
  portRange: {
    type: 'object',
    additionalProperties: false,
    properties: { low: { $ref: '#/definitions/portNumber' }, high: { $ref: '#/definitions/portNumber' } },
    required: ['low', 'high'],
  },
  protocolName: { type: 'string', enum: ['tcp', 'udp'] },
  timeoutSeconds: { type: 'integer', minimum: 0, maximum: MAX_INT32 },
  proxyType: { type: 'string', enum: ['http'], description: 'supported proxy types' },
  proxyConfiguration: {
    type: 'object',
    required: ['type', 'address'],
    properties: {
      type: { $ref: '#/definitions/proxyType', description: 'The type of the proxy being used' },
      address: { type: 'string', description: 'The address of the proxy in host:port format' },
    },
  },
  ipv4AddressTranslation: {
    type: 'object',
    additionalProperties: false,
    properties: {
      from: { type: 'string', format: 'ipv4' },
      to: { type: 'string', format: 'ipv4' },
      prefixLength: { type: 'integer', minimum: 0, maximum: 32 },
    },
  },
  ipv6AddressTranslation: {
    type: 'object',
    additionalProperties: false,
    properties: {
      from: { type: 'string', format: 'ipv6' },
      to: { type: 'string', format: 'ipv6' },
      prefixLength: { type: 'integer', minimum: 0, maximum: 128 },
    },
  },
  addressTranslation: { oneOf: [{ $ref: '#/definitions/ipv4AddressTranslation' }, { $ref: '#/definitions/ipv6AddressTranslation' }] },
};

const hostV1Definitions = combine(healthCheckDefinitions, tunnelDefinitions);

const inhabitedSetOf = (ref: string, description?: string): Json => ({
  allOf: [{ $ref: '#/definitions/inhabitedSet' }, { items: { $ref: `#/definitions/${ref}` } }],
  ...(description ? { description } : {}),
});

const listenOptions: Json = {
  listenOptions: {
    type: 'object',
    additionalProperties: false,
    properties: {
      connectTimeoutSeconds: {
        $ref: '#/definitions/timeoutSeconds',
        description:
          'Timeout when making outbound connections. Defaults to 5. If both connectTimeoutSeconds and connectTimeout are specified, connectTimeout will be used.',
        deprecated: true,
      },
      connectTimeout: {
        $ref: '#/definitions/duration',
        description:
          "Timeout when making outbound connections. Defaults to '5s'. If both connectTimeoutSeconds and connectTimeout are specified, connectTimeout will be used.",
      },
      maxConnections: { type: 'integer', minimum: 1, description: 'defaults to 3' },
      identity: {
        type: 'string',
        description:
          "Associate the hosting terminator with the specified identity. '$tunneler_id.name' resolves to the name of the hosting tunneler's identity. '$tunneler_id.tag[tagName]' resolves to the value of the 'tagName' tag on the hosting tunneler's identity.",
      },
      bindUsingEdgeIdentity: {
        type: 'boolean',
        description:
          "Associate the hosting terminator with the name of the hosting tunneler's identity. Setting this to 'true' is equivalent to setting 'identiy=$tunneler_id.name'",
      },
      cost: { type: 'integer', minimum: 0, maximum: 65535, description: 'defaults to 0' },
      precedence: { type: 'string', enum: ['default', 'required', 'failed'], description: "defaults to 'default'" },
    },
  },
};

const dialOptions: Json = {
  dialOptions: {
    type: 'object',
    additionalProperties: false,
    properties: {
      identity: {
        type: 'string',
        description: "Dial a terminator with the specified identity. '$dst_protocol', '$dst_ip', '$dst_port are resolved to the corresponding value of the destination address.",
      },
      connectTimeoutSeconds: {
        $ref: '#/definitions/timeoutSeconds',
        description: 'defaults to 5 seconds if no dialOptions are defined. defaults to 15 if dialOptions are defined but connectTimeoutSeconds is not specified.',
      },
    },
  },
};

const forward = (name: string, thing: string): Json => ({
  if: { properties: { [`forward${name}`]: { const: true } }, required: [`forward${name}`] },
  then: { required: [`allowed${name}${name === 'Port' ? 'Ranges' : name === 'Address' ? 'es' : 's'}`] },
  else: { required: [thing] },
});

const hostV1SchemaSansDefs: Json = {
  type: 'object',
  properties: combine(
    healthCheckProperties,
    {
      protocol: { $ref: '#/definitions/protocolName', description: 'Dial the specified protocol when a ziti client connects to the service.' },
      forwardProtocol: {
        type: 'boolean',
        enum: [true],
        description: "Dial the same protocol that was intercepted at the client tunneler. 'protocol' and 'forwardProtocol' are mutually exclusive.",
      },
      allowedProtocols: inhabitedSetOf('protocolName', 'Only allow protocols from this set to be dialed'),
      address: { $ref: '#/definitions/dialAddress', description: 'Dial the specified ip address or hostname when a ziti client connects to the service.' },
      forwardAddress: {
        type: 'boolean',
        enum: [true],
        description: "Dial the same ip address that was intercepted at the client tunneler. 'address' and 'forwardAddress' are mutually exclusive.",
      },
      allowedAddresses: inhabitedSetOf('listenAddress', 'Only allow addresses from this set to be dialed'),
      forwardAddressTranslations: inhabitedSetOf('addressTranslation', 'Translate forwarded addresses according to this table'),
      port: { $ref: '#/definitions/portNumber', description: 'Dial the specified port when a ziti client connects to the service.' },
      forwardPort: {
        type: 'boolean',
        enum: [true],
        description: "Dial the same port that was intercepted at the client tunneler. 'port' and 'forwardPort' are mutually exclusive.",
      },
      allowedPortRanges: inhabitedSetOf('portRange', 'Only allow ports from this set to be dialed'),
      allowedSourceAddresses: inhabitedSetOf(
        'listenAddress',
        'hosting tunnelers establish local routes for the specified source addresses so binding will succeed',
      ),
      proxy: { $ref: '#/definitions/proxyConfiguration', description: 'If defined, outgoing connections will be send through this proxy server' },
    },
    listenOptions,
  ),
  additionalProperties: false,
  allOf: [forward('Protocol', 'protocol'), forward('Address', 'address'), forward('Port', 'port')],
};

const routerLinkSchema: Json = {
  $id: 'https://netfoundry.io/schemas/router.link.v1.config.json',
  type: 'object',
  additionalProperties: false,
  definitions: {
    duration: { type: 'string', pattern: '^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$' },
    groups: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
    channelOptions: {
      type: 'object',
      additionalProperties: false,
      properties: {
        outQueueSize: { type: 'integer', minimum: 1 },
        maxQueuedConnects: { type: 'integer', minimum: 1, maximum: 5000 },
        maxOutstandingConnects: { type: 'integer', minimum: 1, maximum: 1000 },
        connectTimeout: { $ref: '#/definitions/duration' },
        writeTimeout: { $ref: '#/definitions/duration' },
      },
    },
    backoff: {
      type: 'object',
      additionalProperties: false,
      properties: {
        retryBackoffFactor: { type: 'number', minimum: 1, maximum: 100 },
        minRetryInterval: { $ref: '#/definitions/duration' },
        maxRetryInterval: { $ref: '#/definitions/duration' },
      },
    },
    listener: {
      type: 'object',
      additionalProperties: false,
      required: ['bind'],
      properties: {
        binding: { type: 'string', minLength: 1, default: 'transport' },
        bind: { type: 'string', minLength: 1, description: 'transport address e.g. tls:0.0.0.0:6262' },
        advertise: { type: 'string' },
        bindInterface: { type: 'string' },
        groups: { $ref: '#/definitions/groups' },
        options: { $ref: '#/definitions/channelOptions' },
      },
    },
    dialer: {
      type: 'object',
      additionalProperties: false,
      properties: {
        binding: { type: 'string', minLength: 1, default: 'transport' },
        maxDefaultConnections: { type: 'integer', minimum: 1, maximum: 100 },
        maxAckConnections: { type: 'integer', minimum: 0, maximum: 100 },
        startupDelay: { $ref: '#/definitions/duration' },
        bindInterface: { type: 'string', description: 'interface name (matches listener.bindInterface)' },
        groups: { $ref: '#/definitions/groups' },
        healthyDialBackoff: { $ref: '#/definitions/backoff' },
        unhealthyDialBackoff: { $ref: '#/definitions/backoff' },
        options: { $ref: '#/definitions/channelOptions' },
      },
    },
    heartbeats: {
      type: 'object',
      additionalProperties: false,
      properties: {
        sendInterval: { $ref: '#/definitions/duration' },
        checkInterval: { $ref: '#/definitions/duration' },
        closeUnresponsiveTimeout: { $ref: '#/definitions/duration' },
      },
    },
  },
  properties: {
    listeners: { type: 'array', items: { $ref: '#/definitions/listener' } },
    dialers: { type: 'array', items: { $ref: '#/definitions/dialer' } },
    heartbeats: { $ref: '#/definitions/heartbeats' },
    payloadSenderQueueSize: { type: 'integer', minimum: 1 },
    ackSenderQueueSize: { type: 'integer', minimum: 1 },
    gcMode: {
      type: 'string',
      enum: ['preserve', 'orphaned', 'changed'],
      default: 'preserve',
      description:
        "Auto-GC policy for stale links. 'preserve' (default) never acts; 'orphaned' closes links whose supporting listener/dialer is entirely gone; 'changed' closes links whose listener/dialer details have changed (binding, advertise, groups).",
    },
  },
};

const service = (id: string, name: string, schema: Json): NewConfigType => ({ id, name, schema, target: 'service', tags: {} });

export const BUILTIN_CONFIG_TYPES: readonly NewConfigType[] = [
  service('f2dd2df0-9c04-4b84-a91e-71437ac229f1', 'ziti-tunneler-client.v1', {
    $id: 'http://edge.openziti.org/schemas/ziti-tunneler-client.v1.config.json',
    type: 'object',
    additionalProperties: false,
    required: ['hostname', 'port'],
    properties: { hostname: { type: 'string' }, port: { type: 'integer', minimum: 0, maximum: MAX_UINT16 } },
  }),
  service('cea49285-6c07-42cf-9f52-09a9b115c783', 'ziti-tunneler-server.v1', {
    $id: 'http://edge.openziti.org/schemas/ziti-tunneler-server.v1.config.json',
    type: 'object',
    additionalProperties: false,
    definitions: healthCheckDefinitions,
    required: ['hostname', 'port'],
    properties: combine(
      {
        protocol: { type: ['string', 'null'], enum: ['tcp', 'udp'] },
        hostname: { type: 'string' },
        port: { type: 'integer', minimum: 0, maximum: MAX_UINT16 },
      },
      healthCheckProperties,
    ),
  }),
  service('g7cIWbcGg', 'intercept.v1', {
    $id: 'http://edge.openziti.org/schemas/intercept.v1.config.json',
    type: 'object',
    additionalProperties: false,
    definitions: tunnelDefinitions,
    properties: combine(dialOptions, {
      protocols: inhabitedSetOf('protocolName'),
      addresses: inhabitedSetOf('listenAddress'),
      portRanges: inhabitedSetOf('portRange'),
      sourceIp: {
        type: 'string',
        description:
          "The source IP (and optional :port) to spoof when the connection is egressed from the hosting tunneler. '$tunneler_id.name' resolves to the name of the client tunneler's identity. '$tunneler_id.tag[tagName]' resolves to the value of the 'tagName' tag on the client tunneler's identity. '$src_ip' and '$src_port' resolve to the source IP / port of the originating client. '$dst_port' resolves to the port that the client is trying to connect.",
      },
      allowedSourceAddresses: inhabitedSetOf('listenAddress', 'white list of source ips/cidrs that can be intercepted. all ips can be intercepted if this is not set.'),
    }),
    required: ['protocols', 'addresses', 'portRanges'],
  }),
  service('NH5p4FpGR', 'host.v1', combine({ $id: 'http://ziti-edge.netfoundry.io/schemas/host.v1.schema.json', definitions: hostV1Definitions }, hostV1SchemaSansDefs)),
  service('host.v2', 'host.v2', {
    $id: 'http://ziti-edge.netfoundry.io/schemas/host.v2.schema.json',
    definitions: combine(hostV1Definitions, {
      terminator: hostV1SchemaSansDefs,
      terminatorList: { type: 'array', minItems: 1, items: { $ref: '#/definitions/terminator' } },
    }),
    type: 'object',
    properties: { terminators: { $ref: '#/definitions/terminatorList' } },
    required: ['terminators'],
    additionalProperties: false,
  }),
  service('interfaces.v1', 'interfaces.v1', {
    $id: 'https://netfoundry.io/schemas/interfaces.v1.config.json',
    type: 'object',
    additionalProperties: false,
    definitions: healthCheckDefinitions,
    required: ['interfaces'],
    properties: { interfaces: { type: 'array', items: { type: 'string' } } },
  }),
  service('proxy.v1', 'proxy.v1', {
    $id: 'https://netfoundry.io/schemas/proxy.v1.config.json',
    type: 'object',
    additionalProperties: false,
    definitions: { protocol: { type: 'string', enum: ['tcp', 'udp'], description: 'Network protocol' } },
    required: ['port', 'protocols'],
    properties: {
      port: { type: 'number', minimum: 1, maximum: 65535, description: 'The port to listen on' },
      protocols: { type: 'array', minItems: 1, items: { $ref: '#/definitions/protocol' } },
      binding: { type: 'string' },
    },
  }),
  { id: 'router.link.v1', name: 'router.link.v1', schema: routerLinkSchema, target: 'router', tags: {} },
];
