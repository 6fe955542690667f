export declare function declarationsOf(packageDir: string, entry?: string): string;
export declare function apiReport(packageName: string, packageDir: string, entry?: string): string;
