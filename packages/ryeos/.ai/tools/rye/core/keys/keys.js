// rye:signed:2026-11-22T02:17:06Z:9f7ac70ccc66c517391f79bf7ce5f5f74c1f3c6b1f03108a98adb8ae753d121e:i33UcTYIW_ewvnzKheHt7SATGYS56ebrM4LWGjcBHnKq_uVx-JeXHL_6BGXHBJRcqRxt81PJiksOGbCqW2MqAA==:007af625371e6e71
export const __version__ = "1.0.0";
export const __tool_type__ = "javascript";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "rye/core/keys";
export const __tool_description__ = "Manage signing keys: generate your key pair (and trust it), trust someone's public key, list trusted keys";
export const CONFIG_SCHEMA = {
  type: "object",
  properties: {
    action: { enum: ["generate", "trust", "list"], description: "generate: create your key pair if missing and trust it; trust: add a public key to a trust store; list: show trusted keys" },
    public_key: { type: "string", description: "trust: the PEM text of the public key to trust" },
    owner: { type: "string", description: "trust: who the key belongs to (default 'peer')" },
    space: { enum: ["user", "project"], description: "trust: which trust store (default user)" },
    force: { type: "boolean", description: "generate: replace an existing key pair" },
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
    if (typeof params.public_key !== "string" || !params.public_key.includes("BEGIN PUBLIC KEY")) {
      result = fail("trust needs public_key: the PEM text of an Ed25519 public key");
    } else {
      const space = params.space === "project" ? "project" : "user";
      result = { success: true, ...(await rye.trustKey(params.public_key, { owner: params.owner ?? "peer", space })) };
    }
  } else result = fail(`Unknown action '${params.action}'. Use generate, trust or list.`);
} catch (error) {
  result = fail(error instanceof Error ? error.message : String(error));
}
console.log(JSON.stringify(result));
