/**
 * The one form in which entity names (identities, services, policies, routers, configs, config
 * types, posture checks, auth policies, CAs, external JWT signers) are stored and compared: Unicode
 * NFC, without leading or trailing white space (what `String.prototype.trim` removes: Unicode
 * `White_Space`, line terminators and the BOM). "café" typed composed (U+00E9), decomposed
 * (`e` + U+0301) or as "café " is one name, so the unique name index refuses the second of them.
 * Inner white space and case are kept. A name that is only white space becomes '' and is refused
 * as the empty name is. Each context calls this where it validates a name (create, update and
 * patch alike); filters compare `name` after NFC (`ScalarSymbol.nfc`).
 */
export function normalizeName(name: string): string {
  return name.normalize('NFC').trim();
}

/** A string literal compared with an NFC column (see `ScalarSymbol.nfc`): NFC only, white space kept. */
export function nfc(text: string): string {
  return text.normalize('NFC');
}
