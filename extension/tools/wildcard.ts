/** The tools' URL patterns share the protocol's matcher (server/protocol/wildcard.ts), which plugin match patterns use too. */
export { wildcardMatch } from '../../server/protocol/wildcard.ts';
