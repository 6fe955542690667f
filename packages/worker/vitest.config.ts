import { packageTests } from '@ryeos/build-config/vitest';

export default packageTests('worker');
