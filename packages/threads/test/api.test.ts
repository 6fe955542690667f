import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';

// The public surface of this package: a change here is a visible diff in review.
describe('public API', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toMatchSnapshot();
  });
});
