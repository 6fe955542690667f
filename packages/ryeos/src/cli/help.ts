import { packageVersion } from '../package-root.js';

export function helpText(): string {
  return `rye ${packageVersion()} — RYE OS, a portable operating system for AI agents

Usage: rye <command> [options]

Commands:
  demo               Run each lillux primitive once and print what it did
                     (subprocess, signing and verification, HTTP with SSE streaming)

Options:
  -h, --help         Show this help
  -v, --version      Show the version

Results go to stdout (JSON); logs go to stderr. Exit code 1 means the result has status "error".
`;
}
