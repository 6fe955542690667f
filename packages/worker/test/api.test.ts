import { join } from 'node:path';
import { apiReport } from '@ryeos/build-config/api-report';
import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';

// The public surface of this package: a change here is a visible diff in review.
describe('public API', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toMatchSnapshot();
  });

  it('records the types of its public API (api/*.api.md)', async () => {
    const packageDir = join(import.meta.dirname, '..');
    for (const entry of ['index']) {
      await expect(apiReport('@ryeos/worker', packageDir, entry)).toMatchFileSnapshot(
        join('..', 'api', `${entry}.api.md`),
      );
    }
  });
});
