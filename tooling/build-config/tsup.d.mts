import type { Options } from 'tsup';
export declare function packageBuild(entry?: string[]): Options | Options[];
