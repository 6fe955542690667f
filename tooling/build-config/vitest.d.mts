import type { UserWorkspaceConfig } from 'vitest/config';
export declare function packageTests(name: string): UserWorkspaceConfig;
