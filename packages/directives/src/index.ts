export type { DeclaredOutput } from './returns.js';
export { renderReturns } from './returns.js';
