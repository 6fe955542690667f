// rye:signed:2026-11-25T02:45:42Z:a2451202d73cd48f1f425eab995308e2f9740e5039b2d5a88e93296e0e46c932:LeUm7Ej3IzoiNWO8RrHP5z6ssbm3v09upsCEbJXgQXsXCJlqe4ytisSUrvTCFb5NR73QfV_zwfr94Rm3xBwaDw==:007af625371e6e71
// Launches a node script tool: `node launch.mjs <tool> --project-path <dir>`. The tool sees
// process.argv as if it had been started directly (`node <tool> --project-path <dir>`).
import { prepareTool } from './tool-loader.mjs';

const [node, , toolPath, ...rest] = process.argv;
process.argv = [node, toolPath, ...rest];
const flag = rest.indexOf('--project-path');
const projectPath = flag === -1 ? process.cwd() : rest[flag + 1];

let url;
try {
  url = await prepareTool(toolPath, projectPath);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : error}\n`);
  process.exit(1);
}
await import(url);
