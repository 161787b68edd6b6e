/**
 * The policy-owned part of OpenZiti's router data model (reference router-control-plane §2.b),
 * whole: what every router of the network holds to authorise dials and binds on its own. The
 * fabric context fetches it (`PolicyService.GetRouterDataModel`), diffs successive answers into
 * change sets, and learns when to fetch again from the `router-data-model.changed` event.
 * Field names follow `ziti.v1.RouterDataModel`.
 */
export interface RouterDataModel {
  configTypes: { id: string; name: string }[];
  /** `dataJson`: the config's data as a JSON text. */
  configs: { id: string; typeId: string; name: string; dataJson: string }[];
  /** `configIds`: the service's configs in their order. */
  services: { id: string; name: string; encryptionRequired: boolean; configIds: string[] }[];
  /** What each service policy selects now (its links), ids sorted. */
  servicePolicies: { id: string; name: string; policyType: string; identityIds: string[]; serviceIds: string[]; postureCheckIds: string[] }[];
  identities: RdmIdentity[];
  /** `detailJson`: the kind's own fields (macAddresses, domains, operatingSystems, process…) as a JSON object text. */
  postureChecks: { id: string; name: string; typeId: string; detailJson: string }[];
}

export interface RdmIdentity {
  id: string;
  name: string;
  disabled: boolean;
  /** "default", "required" or "failed". */
  defaultHostingPrecedence: string;
  defaultHostingCost: number;
  serviceHostingPrecedences: Record<string, string>;
  serviceHostingCosts: Record<string, number>;
  /** The identity's appData as a JSON object text (`{}` when it has none). */
  appDataJson: string;
  /** service id → its configs for this identity (config type id → config id). */
  serviceConfigs: Record<string, { configs: Record<string, string> }>;
}

/** The entities a partial read names, by kind (the `router-data-model.changed` kinds). */
export interface RdmSelection {
  configTypes: string[];
  configs: string[];
  services: string[];
  servicePolicies: string[];
  identities: string[];
  postureChecks: string[];
}

/** Reads the model (whole, or the entities `only` names) from one consistent view of the database. */
export interface RouterDataModelSource {
  model(only?: RdmSelection): Promise<RouterDataModel>;
}
