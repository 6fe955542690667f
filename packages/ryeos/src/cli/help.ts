import { packageVersion } from '../package-root.js';

export function helpText(): string {
  return `rye ${packageVersion()} — RYE OS, a portable operating system for AI agents

Usage: rye <command> [options]

Commands:
  init               Set up your user space (signing key, trusted) and an example project .ai/
                     [--project DIR] [--user-only]; safe to run again, never overwrites
  execute <ref>      Run a tool, follow a directive, or read knowledge:
                       rye execute tool:acme/hello --params '{"name":"x"}'
                       rye execute directive:acme/review --params '{"path":"src"}'
                       rye execute knowledge:acme/style
                     (also: rye execute tool acme/hello; JSON params may come on stdin)
      --params JSON    parameters (or '-' to read them from stdin)
      --project DIR    project root (default: current directory)
      --dry-run        build and verify the chain without running anything
      --trace          add resolution, integrity and env steps to the result
      --thread MODE    inline (default) | fork (directives: managed thread)
      --target WHERE   local (default) | remote | remote:<name>
      --async          return a handle at once (fork directives, tools)
      --model M, --limit-overrides JSON   fork options
  search <scope> <query>   Find items: rye search tool 'read file' [--space all|local|project|user|system]
                     [--limit 10] [--offset 0] [--sort-by score|name|date] [--fuzzy]
                     scopes: tool, directive, knowledge, tool.rye.file-system.*, rye.search.directive.*
  load <ref>         Read a verified item: rye load tool:rye/bash [--from SPACE] [--to project|user]
                     (--to copies it byte-for-byte; sign the copy before it runs)
  sign <ref|glob>    Validate and sign items: rye sign 'tool:acme/*' [--space project|user]
  keys generate      Create your signing key pair and trust it (--force to replace)
  keys trust <pem>   Trust someone's public key [--owner NAME] [--space user|project]
  keys list          List trusted keys
  demo               A first session in a throw-away project: init, search, tools (file system,
                     shell), an inline directive and a signed edit. 'demo primitives' checks the primitives

Options:
  -h, --help         Show this help
  -v, --version      Show the version

Results go to stdout (JSON); logs go to stderr. Exit code 1 means the result has status "error".
`;
}
