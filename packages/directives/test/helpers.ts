import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Executor, trustFileText } from '@ryeos/executor';
import type { KeyPairPem } from '@ryeos/lillux';
import { fingerprint, generateKeyPair, signContent } from '@ryeos/lillux';

const MD = { prefix: '<!--', suffix: '-->' };

export interface DirectiveWorkspace {
  project: string;
  key: KeyPairPem;
  executor(env?: Record<string, string | undefined>): Promise<Executor>;
  write(relPath: string, text: string, sign?: boolean): Promise<string>;
}

/** A project + user space over the executor's own system bundle (for its extractors). */
export async function directiveWorkspace(): Promise<DirectiveWorkspace> {
  const root = await mkdtemp(join(tmpdir(), 'rye-dir-'));
  const project = join(root, 'project');
  const user = join(root, 'user');
  const key = generateKeyPair();
  const trusted = join(user, '.ai', 'config', 'keys', 'trusted');
  await mkdir(trusted, { recursive: true });
  await writeFile(
    join(trusted, `${fingerprint(key.publicKeyPem)}.toml`),
    trustFileText(key.publicKeyPem, 'local'),
  );
  return {
    project,
    key,
    executor: (env = { PATH: process.env.PATH }) =>
      Executor.create({
        projectPath: project,
        userSpace: user,
        env,
        metadataCacheDir: false,
      }),
    async write(relPath, text, sign = true) {
      const path = join(project, '.ai', relPath);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, sign ? signContent(text, { format: MD, keyPair: key }) : text);
      return path;
    },
  };
}

export function directive(
  name: string,
  opts: { category?: string; extends?: string; inner?: string; body?: string } = {},
): string {
  const ext = opts.extends ? ` extends="${opts.extends}"` : '';
  return `# ${name}\n\n\`\`\`xml\n<directive name="${name}" version="1.0.0"${ext}>\n  <metadata>\n    <description>${name}</description>\n    <category>${opts.category ?? ''}</category>\n    <author>test</author>\n  </metadata>\n${opts.inner ?? ''}</directive>\n\`\`\`\n\n${opts.body ?? `Steps for ${name}.`}\n`;
}
