/**
 * What runs before every verb: the project flag check and the process settings. Each verb's module
 * re-exports these, so a verb built apart (tsup.config.ts) brings its own and the CLI loads one
 * bundle for it.
 */

export { processSettings } from '../settings.js';
export { checkProjectFlag } from './args.js';
