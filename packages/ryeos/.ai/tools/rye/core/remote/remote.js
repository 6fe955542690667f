// rye:signed:2026-11-29T07:04:57Z:343bbb1d9a3f014c9b07881c15d86f965d19cae1e943d32e43a8c0f55997e5d3:PVJ5p9URJIX06oPxw77RnILf-fvs7yQyr9N0GHN-5wDdADu0OOMKHZgQ3dFL7VJ9ACzjZNdlfbsEP-Y0wC5aCw==:007af625371e6e71
export const __version__ = "1.0.0";
export const __tool_type__ = "javascript";
export const __executor_id__ = "rye/core/runtimes/node/function";
export const __category__ = "rye/core/remote";
export const __tool_description__ = "Remote execution on a ryeos-remote server named in .ai/config/remotes/remotes.yaml: push the project and user spaces (only what the server lacks), execute a tool or a forked directive there (the result and records come back signed by the server's pinned key), pull objects, status, threads, thread_status";
export const CONFIG_SCHEMA = {
  type: "object",
  properties: {
    action: { enum: ["push", "pull", "status", "execute", "threads", "thread_status"], description: "push: sync spaces; execute: run an item remotely; pull: fetch objects by hash; status: local manifests and configured remotes; threads / thread_status: the server's runs" },
    remote: { type: "string", description: "a remote named in remotes.yaml (default: default)" },
    item_type: { enum: ["tool", "directive"], description: "execute: what to run" },
    item_id: { type: "string", description: "execute: the item's id" },
    parameters: { type: "object", description: "execute: the item's parameters (a directive's inputs, validated locally first)" },
    thread: { enum: ["inline", "fork"], description: "execute: inline for a tool, fork for a directive" },
    model: { type: "string", description: "execute: a forked directive's model" },
    limit_overrides: { type: "object", description: "execute: a forked directive's limit overrides" },
    hashes: { type: "array", items: { type: "string" }, description: "pull: object hashes" },
    thread_id: { type: "string", description: "thread_status: a remote thread id (rye-remote-…)" },
    limit: { type: "integer", description: "threads: how many (default 20)" },
    timeout: { type: "number", description: "seconds the whole action may take (push, the run, the pull)" },
  },
  required: ["action"],
};

// Same operations as `rye remote …`, done by the ryeos package. A function tool: its warm worker
// keeps ryeos loaded between calls (one worker per project and environment).
import { join } from "node:path";
import { pathToFileURL } from "node:url";

// The host tells every tool where ryeos lives (RYE_SYSTEM_SPACE), so a copy of this tool in
// project or user space still finds it.
const ryeosEntry = join(process.env.RYE_SYSTEM_SPACE ?? "", "dist", "index.js");
let ryeos;
const ryes = new Map();

const ACTIONS = ["push", "pull", "status", "execute", "threads", "thread_status"];

export async function execute(raw, context) {
  const { timeout: _timeout, ...params } = raw ?? {};
  try {
    // Pinning a server's changed key is a person's decision (rye remote trust NAME --replace),
    // never a caller's: this tool cannot do it.
    if (!ACTIONS.includes(params.action)) {
      return { success: false, error: `Unknown action '${params.action}'. Use ${ACTIONS.join(", ")}.`, error_type: "validation" };
    }
    ryeos ??= await import(pathToFileURL(ryeosEntry).href);
    const projectPath = context?.projectPath ?? process.cwd();
    let rye = ryes.get(projectPath);
    if (!rye) {
      rye = ryeos.createRye({ projectPath, spareRunner: false });
      ryes.set(projectPath, rye);
    }
    return { success: true, ...(await rye.remote(params.action, params)) };
  } catch (error) {
    return {
      success: false,
      error: error instanceof Error ? error.message : String(error),
      error_type: typeof error?.code === "string" ? error.code.toLowerCase() : "internal",
      ...(typeof error?.hint === "string" ? { hint: error.hint } : {}),
    };
  }
}
