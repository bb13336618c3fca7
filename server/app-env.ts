/** Hono's environment for every route: Bun's server object, for upgrades and per-request timeouts. */
export type AppEnv = { Bindings: { server: import('bun').Server<unknown> } };
