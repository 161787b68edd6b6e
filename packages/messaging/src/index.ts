export type { ChangeEvent, EventHandler, Subscription, EventBus, Cache } from './types.js';
