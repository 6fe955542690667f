// rye:signed:2026-11-29T06:40:49Z:8d18560cb8430d2bca95f6a16ceeb755ac16331480d5d093498fc378d7219f6e:oeXYtXgOYcad1pojzhqg2yufuEX5uyaHoy-08DcKQ7JwIhYCDZ6OdCZeJ5IeEEBqw1foHY_wd9CNWYbJctMPAw==:007af625371e6e71
export const __version__ = "1.0.0";
export const __tool_type__ = "javascript";
export const __executor_id__ = "rye/core/runtimes/node/node";
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

// Same operations as `rye remote …`, done by the ryeos package.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

// The host tells every tool where ryeos lives (RYE_SYSTEM_SPACE), so a copy of this tool in
// project or user space still finds it.
const ryeosEntry = join(process.env.RYE_SYSTEM_SPACE ?? "", "dist", "index.js");
const { createRye } = await import(pathToFileURL(ryeosEntry).href);

let raw = "";
for await (const chunk of process.stdin) raw += chunk;
const { timeout: _timeout, ...params } = JSON.parse(raw || "{}");
const flag = process.argv.indexOf("--project-path");
const rye = createRye({ projectPath: flag === -1 ? process.cwd() : process.argv[flag + 1] });

const ACTIONS = ["push", "pull", "status", "execute", "threads", "thread_status"];
let result;
try {
  // Pinning a server's changed key is a person's decision (rye remote trust NAME --replace),
  // never a caller's: this tool cannot do it.
  if (!ACTIONS.includes(params.action)) {
    result = { success: false, error: `Unknown action '${params.action}'. Use ${ACTIONS.join(", ")}.`, error_type: "validation" };
  } else {
    result = { success: true, ...(await rye.remote(params.action, params)) };
  }
} catch (error) {
  result = {
    success: false,
    error: error instanceof Error ? error.message : String(error),
    error_type: typeof error?.code === "string" ? error.code.toLowerCase() : "internal",
    ...(typeof error?.hint === "string" ? { hint: error.hint } : {}),
  };
}
console.log(JSON.stringify(result));
