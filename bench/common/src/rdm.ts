import type { RouterDouble } from '../../../test/support/router-double.js';

/** Renews the double's subscription at the index it holds (routers renew before it lapses; nothing is resent). */
export async function renew(double: RouterDouble): Promise<void> {
  const state = double.rdm.dataStates.at(-1);
  if (!state) return;
  const index = Math.max(Number(state.endIndex), ...double.rdm.changeSets.map((c) => Number(c.index)));
  await double.subscribe({ currentIndex: index, timelineId: state.timelineId, renew: true });
}
