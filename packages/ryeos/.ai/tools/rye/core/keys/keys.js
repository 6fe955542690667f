// rye:signed:2026-11-24T22:47:15Z:74be84d61992f8ba672a577f9ac9f2f8628bcbbcffbf1545056b9ebc1fa33d54:GaWqN-ZeMM5yM13oQNnzPUfNUgaQmzsvDM9V6S-YBLhTlt0kHA7Fs-Y_yzXmtbIVGvl7sBwpYmpvLt0rOqmABg==:007af625371e6e71
export const __version__ = "1.0.0";
export const __tool_type__ = "javascript";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "rye/core/keys";
export const __tool_description__ = "Manage signing keys: generate your key pair (and trust it; force replaces it, keeping the old one), list trusted keys. Trusting someone's key is done by a person with rye keys trust";
export const CONFIG_SCHEMA = {
  type: "object",
  properties: {
    action: { enum: ["generate", "trust", "list"], description: "generate: create your key pair if missing and trust it; list: show trusted keys; trust: refused (use the rye keys trust CLI)" },
    public_key: { type: "string", description: "trust: the PEM text of the public key to trust" },
    owner: { type: "string", description: "trust: who the key belongs to (default 'peer')" },
    space: { enum: ["user", "project"], description: "trust: which trust store (default user)" },
    force: { type: "boolean", description: "generate: replace an existing key pair (the old one is kept beside it, timestamped)" },
  },
  required: ["action"],
};

// Same operations as `rye keys …`, done by the ryeos package.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

// The host tells every tool where ryeos lives (RYE_SYSTEM_SPACE), so a copy of this tool in
// project or user space still finds it.
const ryeosEntry = join(process.env.RYE_SYSTEM_SPACE ?? "", "dist", "index.js");
const { createRye } = await import(pathToFileURL(ryeosEntry).href);

let raw = "";
for await (const chunk of process.stdin) raw += chunk;
const params = JSON.parse(raw || "{}");
const flag = process.argv.indexOf("--project-path");
const rye = createRye({ projectPath: flag === -1 ? process.cwd() : process.argv[flag + 1] });

const fail = (error) => ({ success: false, error });
let result;
try {
  if (params.action === "generate") result = { success: true, ...(await rye.generateKeys({ force: params.force === true })) };
  else if (params.action === "list") result = { success: true, keys: await rye.listKeys() };
  else if (params.action === "trust") {
    // Whom to trust is a person's decision: a key trusted here makes everything it signs run. A
    // caller (an agent, a model) can ask for it, never do it.
    result = fail(
      "Trusting a key is not done through a tool call: review the key, then run `rye keys trust <public_key.pem> [--space project]` yourself",
    );
  } else result = fail(`Unknown action '${params.action}'. Use generate, trust or list.`);
} catch (error) {
  result = fail(error instanceof Error ? error.message : String(error));
}
console.log(JSON.stringify(result));
