import { packageVersion } from '../package-root.js';
import { closestWord } from './closest.js';
import { printable } from './printable.js';

export function helpText(): string {
  return `rye ${packageVersion()} — RYE OS, a portable operating system for AI agents

Usage: rye <command> [options]     (rye help <command> prints a command's usage)

Commands:
  init               Set up your user space (signing key, trusted) and an example project .ai/
                     [--project DIR] [--user-only]; safe to run again, never overwrites
  execute <ref>      Run a tool, follow a directive, or read knowledge:
                       rye execute tool:example/hello --params '{"name":"Ada"}'
                       rye execute directive:example/greet --params '{"name":"Ada"}'
                       rye execute knowledge:example/about
                     (also: rye execute tool example/hello)
      --params JSON    parameters (or '-' to read them from stdin)
      --project DIR    project root (default: current directory)
      --dry-run        build and verify the chain without running anything
      --trace          add resolution, integrity and env steps to the result
      --thread fork    run a directive in its own managed LLM thread [--model M]
                       [--limit-overrides '{"turns":5,"spend":0.5}']
  search <scope> <query>   Find items: rye search tool 'read file' [--space all|local|project|user|system]
                     [--limit 10] [--offset 0] [--sort-by score|name|date] [--fuzzy] [--all]
                     scopes: tool, directive, knowledge, tool.rye.file-system.*, rye.search.directive.*
  load <ref>         Read a verified item: rye load tool:rye/bash [--from SPACE] [--to project|user]
                     (--to copies it byte-for-byte; sign the copy before it runs)
  sign <ref|glob>    Validate and sign items: rye sign 'tool:acme/*' [--space project|user]
  keys generate      Create your signing key pair and trust it (--force to replace)
  keys trust <pem>   Trust someone's public key [--owner NAME] [--space user|project]
  keys list          List trusted keys
  remote add <name> <url>   Name a ryeos-remote server [--key-env VAR] [--space user|project]
  remote list|push|status|threads   Remotes, sync and runs [--remote NAME] (rye help remote)
  threads list       The project's managed threads [--status S] [--limit N] (a tree on a terminal)
  threads show <id>  One thread: status, cost, outputs, and whether its record and transcript verify
  threads view       The threads live in a browser page on 127.0.0.1 [--control] [--no-open] (or rye view)
  threads wait|tail|cancel|kill|resume|chain <id>   Follow and steer threads (rye help threads)
  graphs resume <run_id>   Continue a state-graph run after its last signed step
  graphs validate <ref>    A graph's errors and warnings, without running it (rye help graphs)
  worker             Run the thread jobs queued in PostgreSQL [--database-url URL] [--concurrency N]
                     [--worker-id ID] [--project DIR]... (rye help worker)
  replay <script>    Serve scripted LLM replies on 127.0.0.1 in the Anthropic and OpenAI wire formats
                     [--port N]; point ANTHROPIC_BASE_URL / OPENAI_BASE_URL at it to test offline
  demo               A first session in a throw-away project: init, search, tools (file system,
                     shell), an inline directive and a signed edit. 'demo primitives' checks the primitives
  help [command]     This help, or one command's usage

Options:
  -h, --help         Show this help
  -v, --version      Show the version

Results go to stdout (JSON); logs go to stderr. Exit code 1 means the result has status "error".
`;
}

const NOT_YET = `Managed threads:
  --thread fork     run a directive in its own LLM thread (provider from .ai/tools/rye/agent/
                    providers: set ANTHROPIC_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL)
  --model M         a model id or tier (fast, general, high, max)
  --limit-overrides JSON   e.g. '{"turns": 5, "spend": 0.5}' (turns, tokens, spend, spawns,
                    duration_seconds, depth; never above the directive's parent)

  --async           run detached (a forked directive, or a tool): the reply comes at once with
                    its thread_id; rye threads wait|tail|cancel|kill <id> follow it

Remote execution (a ryeos-remote server named in .ai/config/remotes/remotes.yaml):
  --target remote   run on the default remote; --target remote:<name> on a named one. A tool
                    runs inline there, a directive needs --thread fork; with --async the reply
                    is a local thread_id that rye threads wait|show follow.`;

const PROJECT = '  --project DIR     project root (default: the current directory); also --project-path, -p';

/** Each command's usage: `rye help <command>` and `rye <command> --help` print it. */
const USAGE: Record<string, string> = {
  graphs: `Usage: rye graphs resume <run_id> [--project DIR]
       rye graphs validate <graph ref> [--project DIR]

A state graph (a YAML tool, tool_type: graph) checkpoints after every step into
.ai/state/graphs/<run_id>/ (a signed transcript) and the project's object store.
  resume            continue a run whose process ended early at its saved node; refused when the
                    transcript does not verify, or the graph changed since the run started.
                    Completed steps never run again. Progress lines go to stderr
                    (RYE_GRAPH_QUIET=1 silences them)
  validate          list the graph's errors and warnings and its node count; nothing runs
${PROJECT}
`,
  init: `Usage: rye init [--project DIR] [--user-only]

Sets up your user space with a signing key that it trusts, and a project .ai/ with an example
tool, directive and knowledge item, signed: tool:example/hello, directive:example/greet and
knowledge:example/about. Safe to run again: existing files and keys are kept, never overwritten.

  --project DIR     the project to set up (default: the current directory; created if missing)
  --user-only       only the user space and its key
`,
  execute: `Usage: rye execute <ref> [options]
       rye execute <type> <id> [options]     the original's form

Runs a tool, returns a directive's directions for you (or your agent) to follow, or reads knowledge:
  rye execute tool:example/hello --params '{"name": "Ada"}'
  rye execute directive:example/greet --params '{"name": "Ada"}'
  rye execute knowledge:example/about

  --params JSON     parameters, a JSON object; '-' reads them from stdin. Without --params, JSON
                    already piped in is used; the <type> <id> form reads stdin whenever it is
                    not a terminal, as the original did
${PROJECT}
  --dry-run         build and verify the chain without running anything
  --trace           add resolution, integrity and env steps to the result
  --item-type TYPE  tool, directive or knowledge, for a plain id that names more than one kind

${NOT_YET}

Prints the JSON result; exit code 1 when its status is "error".
`,
  search: `Usage: rye search <scope> <query> [options]

Finds items in the project, user and system spaces:
  rye search tool 'read file'
  rye search knowledge 'signing OR trust'
  rye search 'tool.rye.file-system.*' '*'

  scope             tool, directive or knowledge, optionally with a namespace
                    (tool.rye.file-system.*), or rye.search.<kind>[.<namespace>].*
  query             words (all must match), AND, OR, NOT, ( ), "exact phrase", wild*; '*' lists all
  --space SPACE     all (default), local, project, user or system (all and local are the same:
                    project, user and system)
  --limit N         results to return (default 10); --offset N skips N (default 0)
  --sort-by KEY     score (default), name or date
  --fuzzy           tolerate typos
  --all             also list the tools that are not called directly (runtimes, primitives,
                    extractors, libraries); also --include-internal
${PROJECT}
`,
  load: `Usage: rye load <ref> [--from SPACE] [--to SPACE] [--project DIR]
       rye load <type> <id> [...]

Reads an item (content and metadata) without running it; its signature is verified first.
  rye load knowledge:rye/core/signing
  rye load directive:rye/core/create_tool --to project

  --from SPACE      project, user or system: look only there (default: the first that has it)
  --to SPACE        project or user: copy it there byte-for-byte to customise it; sign the copy
                    (rye sign <ref>) before it runs
${PROJECT}
`,
  sign: `Usage: rye sign <ref | glob | file>... [--space SPACE] [--project DIR]
       rye sign <type> <id>

Validates items and signs them with your key (rye init or rye keys generate creates it):
  rye sign tool:acme/hello          one item
  rye sign 'tool:acme/*'            a glob; '*' signs every item of the project, 'config:*' its config
  rye sign .ai/tools/acme/hello.py  a file

  --space SPACE     project (default) or user
${PROJECT}
`,
  keys: `Usage: rye keys generate [--force]
       rye keys trust <public_key.pem> [--owner NAME] [--space user|project]
       rye keys list

  generate          create your signing key pair and trust it in your user space
                    (--force replaces it; the old one is kept beside it)
  trust FILE        trust someone's public key (PEM) in your user space, or with --space project
                    in the project's (signed with your key); --owner names its owner
  list              every trusted key: system, user and project
${PROJECT}
`,
  remote: `Usage: rye remote add <name> <url> [--key-env VAR] [--space user|project]
       rye remote list | push | status | threads [--remote NAME] [--limit N]
       rye remote trust <name> [--replace]

Remotes are ryeos-remote servers named in .ai/config/remotes/remotes.yaml (system, user and
project space, merged); a remote's API key is read from the variable its key_env names
(default RYE_REMOTE_API_KEY), never from the file. Run an item there with
rye execute <ref> --target remote[:<name>].

  add NAME URL      name a server (in user space, or with --space project the project's)
  list              the configured remotes, whether each key variable is set, pinned keys
  push              send the project and user spaces (only what the server lacks)
  status            the local manifests and the configured remotes (nothing is sent)
  threads           the server's runs of yours
  trust NAME        contact the server and pin its key (first contact does it too); after the
                    server's key really changed, --replace re-pins it: check the new fingerprint
                    with the server's operator first
  --remote NAME     the remote to use (default: default)
${PROJECT}
`,
  view: `Usage: rye view [--control] [--no-open]

The same as rye threads view: serves a page on 127.0.0.1 (a random port) with the project's
thread tree (status, model, turns, tokens, own and subtree spend against the budget, limits,
elapsed time) and each thread's transcript, updating live: model text as it streams, tool calls
with their output as it comes, denials, hooks, retries, continuations; what each thread may do,
and whether its signed records verify. The printed URL carries a token made at each start: only
who has it can open the page. Read-only unless --control (cancel and kill buttons, with the same
checks as rye threads cancel|kill). --no-open prints the URL without starting a browser. Ctrl-C
stops it. With RYE_DATABASE_URL set, the threads come from PostgreSQL.
${PROJECT}
`,
  threads: `Usage: rye threads list [--status S] [--limit N] [--json]
       rye threads show <thread_id> [--json]
       rye threads view [--control] [--no-open]
       rye threads wait <thread_id…> [--timeout S]
       rye threads tail <thread_id> [--follow] [--json]
       rye threads cancel <thread_id>
       rye threads kill <thread_id>
       rye threads resume <thread_id> --message M [--async]
       rye threads chain <thread_id>

  list              the project's managed threads, newest first: id, directive, status, model,
                    cost (--status created|running|completed|error|cancelled|continued); on a
                    terminal a table with each child under its parent and the subtree's spend,
                    JSON through a pipe or with --json
  show ID           one thread: status, cost, outputs and result, and whether its signed
                    thread.json and transcript.jsonl verify (a change after signing is an
                    "integrity" error, exit code 1); on a terminal also its descendants
  view              a page on 127.0.0.1 (random port, a new token in the printed URL each start)
                    with the thread tree, spend against budgets and each transcript, live;
                    read-only unless --control (cancel and kill buttons); --no-open does not
                    start a browser; Ctrl-C stops it. Also: rye view
  wait ID…          until every thread has ended (a handed-off one: the end of its chain), or
                    --timeout seconds (default 600); prints each one's status, outputs, cost, error
  tail ID           the transcript as a person reads it (--json: the raw events); --follow keeps
                    printing as the thread writes, text as it streams and a running tool's
                    output lines (│) as they come, until it ends; an
                    async tool run (rye execute … --async) prints its result once it has ended
  cancel ID         asks the thread and its descendants to stop (they stop their model call)
  kill ID           a detached thread that does not answer: SIGTERM to its process group, then
                    SIGKILL after 3 s; recorded as cancelled
  resume ID         continues a finished thread with --message M, in a new thread of its chain
                    (--async: in the background; queued for a worker with RYE_DATABASE_URL)
  chain ID          the thread's chain of continuations, first to last
${PROJECT}
`,
  worker: `Usage: rye worker [--database-url URL] [--concurrency N] [--worker-id ID] [--project DIR]...
                  [--stop-grace SECONDS]

Runs the thread jobs queued in PostgreSQL: with RYE_DATABASE_URL set, execute … --async of a
directive or a tool and the forks of threads go to the queue instead of a detached process, and
any number of workers on any number of machines share them (a thread's signed records are copied
to the database, so a worker without its folder takes it up). Each worker heartbeats; a worker
silent for 3 s is dead and its jobs run again on the others, from the thread's transcript.
SIGTERM or Ctrl-C: each running thread ends its current turn and goes back to the queue; a
second signal stops the worker at once.
  --database-url URL   postgres://user@host:5432/db, without a password: the process list shows
                       it to every local user (refused); put a URL with a password in
                       RYE_DATABASE_URL (the default) or the password in PGPASSWORD or ~/.pgpass
  --concurrency N      jobs run at once (1-64, default 1)
  --worker-id ID       this worker's name in the database (default: host name and pid)
  --project DIR        a project whose threads it runs (repeatable; default: the current folder)
  --stop-grace S       on SIGTERM, how long running jobs may take to end their turn; then they
                       go back to the queue at once and the worker exits (default 30)
It logs one line per job on stderr. Needs @ryeos/worker and @ryeos/store-postgres installed.
`,
  replay: `Usage: rye replay <script.yaml> [--port N]

Serves scripted LLM replies on 127.0.0.1 in the real Anthropic Messages and OpenAI Chat
Completions wire formats (streaming or not), so directives can be tested offline. It prints the
two variables to set, then serves until Ctrl-C:
  ANTHROPIC_BASE_URL=http://127.0.0.1:PORT      OPENAI_BASE_URL=http://127.0.0.1:PORT/v1

The script lists turns, each answering one request in order:
  turns:
    - tool_calls: [{name: rye_file_system_read, input: {path: README.md}}]
      usage: {input_tokens: 900, output_tokens: 40}
    - text: "Done."
      chunk_delay_ms: 20          # also: hold_before_final_ms, error: {status: 529},
                                  # stream_error, disconnect_after_events
A tool call may also carry text_before (text the model writes just before it) and
input_from_results: {key, field, pick: all|first|last} (input[key] from the field's values in
earlier tool results, e.g. the thread_ids of async children).
`,
  demo: `Usage: rye demo
       rye demo primitives [--json]

  demo              a first session in a throw-away project and user space (removed afterwards):
                    init, search, tools through their chains (file system, shell), an inline
                    directive, and an edit that is refused until it is signed again
  demo primitives   runs each primitive once (subprocess, signing, HTTP on 127.0.0.1);
                    --json prints the steps as JSON
`,
  help: `Usage: rye help [command]

Prints the list of commands, or one command's usage (the same as rye <command> --help).
`,
};

export const COMMAND_NAMES = Object.keys(USAGE);

/** One command's usage, or undefined for an unknown command. */
export function commandUsage(command: string): string | undefined {
  return Object.hasOwn(USAGE, command) ? USAGE[command] : undefined;
}

/** The command a mistyped one most likely meant (a typo or two, or a prefix), if any. */
export function closestCommand(typed: string): string | undefined {
  return closestWord(typed, COMMAND_NAMES);
}

/** The message for an unknown command, with the likely one when there is one. */
export function unknownCommand(typed: string): string {
  const guess = closestCommand(typed);
  return `rye: unknown command '${printable(typed)}'.${guess ? ` Did you mean 'rye ${guess}'?` : ''} Run 'rye --help' for the list of commands.\n`;
}
