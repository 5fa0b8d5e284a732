/** The guard lives in runtime/ (calendars/ uses it too); webhooks keep importing it from here. */
export * from '../../runtime/address-guard.ts';
