export { makeThreadId } from './thread-id.js';
