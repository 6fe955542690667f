// rye:signed:2026-11-22T02:17:06Z:73e521d18d39839ab6ee860a822cde644f760ee58761ba81eb263a81f3420f49:iTV26wjZLuUA1b4XkUHaIph6wyX6lCaUqjB5k45M1QSYyBI9wNZjPTv4qdH-KHX94xI4OP1EWia8fDNspnSmAg==:007af625371e6e71
export const __version__ = "1.0.0";
export const __tool_type__ = "javascript";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "rye/core";
export const __tool_description__ = "Set up RYE: your user space with a trusted signing key, and an example project .ai/ (idempotent; never overwrites)";
export const CONFIG_SCHEMA = {
  type: "object",
  properties: {
    user_only: { type: "boolean", description: "Only set up the user space (key and trust), not the project" },
  },
};

// The same work as `rye init`, done by the ryeos package.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

// The host tells every tool where ryeos lives (RYE_SYSTEM_SPACE), so a copy of this tool in
// project or user space still finds it.
const ryeosEntry = join(process.env.RYE_SYSTEM_SPACE ?? "", "dist", "index.js");
const { createRye, initWorkspace } = await import(pathToFileURL(ryeosEntry).href);

let raw = "";
for await (const chunk of process.stdin) raw += chunk;
const params = JSON.parse(raw || "{}");
const flag = process.argv.indexOf("--project-path");
const rye = createRye({ projectPath: flag === -1 ? process.cwd() : process.argv[flag + 1] });
try {
  const result = await initWorkspace(rye, { userOnly: params.user_only === true });
  console.log(JSON.stringify({ success: true, ...result }));
} catch (error) {
  console.log(JSON.stringify({ success: false, error: error instanceof Error ? error.message : String(error) }));
}
