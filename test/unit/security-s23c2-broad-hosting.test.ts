/**
 * Shared hosting puts every customer's site under the provider's domain, often one or two levels
 * down (a region, a storage zone): a plugin pattern over such a zone runs on as many unrelated
 * sites as `*.com` and needs consent, while a pattern naming one customer's site does not.
 */
import { describe, expect, test } from 'bun:test';
import { isBroadPattern } from '../../server/protocol/plugin-manifest.ts';
import { isMatchPattern } from '../../server/protocol/match-pattern.ts';

/** [zone covering many customers' sites, one customer's site under it]. */
const CASES: readonly [string, string][] = [
  ['s3.amazonaws.com', 'mybucket.s3.amazonaws.com'],
  ['s3.us-east-1.amazonaws.com', 'mybucket.s3.us-east-1.amazonaws.com'],
  ['s3-us-west-2.amazonaws.com', 'mybucket.s3-us-west-2.amazonaws.com'],
  ['s3.dualstack.eu-west-1.amazonaws.com', 'mybucket.s3.dualstack.eu-west-1.amazonaws.com'],
  ['s3-website-us-east-1.amazonaws.com', 'mybucket.s3-website-us-east-1.amazonaws.com'],
  ['s3-website.eu-central-1.amazonaws.com', 'mybucket.s3-website.eu-central-1.amazonaws.com'],
  ['execute-api.us-east-1.amazonaws.com', 'abc123.execute-api.us-east-1.amazonaws.com'],
  ['amazonaws.com', 'mybucket.s3.amazonaws.com'],
  ['cloudfront.net', 'd111111abcdef8.cloudfront.net'],
  ['blob.core.windows.net', 'myaccount.blob.core.windows.net'],
  ['web.core.windows.net', 'myaccount.z13.web.core.windows.net'],
  ['z13.web.core.windows.net', 'myaccount.z13.web.core.windows.net'],
  ['azurewebsites.net', 'myapp.azurewebsites.net'],
  ['azurestaticapps.net', 'gentle-sea-0123.2.azurestaticapps.net'],
  ['2.azurestaticapps.net', 'gentle-sea-0123.2.azurestaticapps.net'],
  ['herokuapp.com', 'myapp.herokuapp.com'],
  ['vercel.app', 'myapp.vercel.app'],
  ['netlify.app', 'myapp.netlify.app'],
  ['pages.dev', 'myapp.pages.dev'],
  ['github.io', 'me.github.io'],
  ['firebaseapp.com', 'myproject.firebaseapp.com'],
  ['web.app', 'myproject.web.app'],
  ['appspot.com', 'myproject.appspot.com'],
  ['uc.r.appspot.com', 'myproject.uc.r.appspot.com'],
  ['run.app', 'myservice-abc123-uc.a.run.app'],
  ['a.run.app', 'myservice-abc123-uc.a.run.app'],
];

describe('shared-hosting zones are broad', () => {
  for (const [zone, site] of CASES) {
    test(`*.${zone} needs consent; ${site} does not`, () => {
      for (const p of [`https://*.${zone}/*`, `*://*.${zone}/*`, `https://*.${zone.toUpperCase()}./*`]) {
        expect(isMatchPattern(p.toLowerCase())).toBe(true);
        expect([p, isBroadPattern(p)]).toEqual([p, true]);
      }
      for (const p of [`https://${site}/*`, `https://*.${site}/*`]) {
        expect([p, isBroadPattern(p)]).toEqual([p, false]);
      }
    });
  }

  test('a site whose own name merely resembles a zone is not broad', () => {
    for (const p of ['https://*.s3.example.com/*', 'https://*.mys3.amazonaws.example/*', 'https://*.blob.core.windows.net.example.com/*', 'https://*.notgithub.io.example/*']) {
      expect([p, isBroadPattern(p)]).toEqual([p, false]);
    }
  });
});
