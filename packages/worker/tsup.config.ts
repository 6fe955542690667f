import { packageBuild } from '@ryeos/build-config/tsup';

export default packageBuild(['src/index.ts']);
