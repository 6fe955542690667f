/** A graph tool's id from the path the runtime hands its process (`…/.ai/tools/<id>.yaml`). */
import { RyeError } from '@ryeos/lillux';

const MARKER = '/.ai/tools/';

export function graphIdOfPath(toolPath: string): string {
  const normal = toolPath.replaceAll('\\', '/');
  const at = normal.lastIndexOf(MARKER);
  const rest = at === -1 ? '' : normal.slice(at + MARKER.length);
  const id = rest.replace(/\.ya?ml$/, '');
  if (!id || id === rest || id.split('/').some((part) => part === '' || part === '.' || part === '..')) {
    throw new RyeError('VALIDATION', `Not a graph tool path: '${toolPath}'`, {
      hint: 'The state-graph runtime runs YAML tools under .ai/tools/ (tool_type: graph).',
    });
  }
  return id;
}
