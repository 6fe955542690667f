/**
 * A thread's provider key stays with the provider (issue 28, point 6): a tool the model runs,
 * `rye/bash env` included, does not see it, so it never reaches the model, the transcript or the
 * knowledge transcript.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { directive, useThreadFixture } from './threads-helpers.js';

const fixture = useThreadFixture();

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe("a thread's provider credentials", () => {
  it('are not in the environment of a tool the model runs (rye/bash env)', async () => {
    const fx = fixture();
    await fx.write(
      '.ai/directives/acme/leak.md',
      directive('leak', {
        metadata:
          '<model tier="general" provider="anthropic"/><permissions><execute><tool>rye.bash</tool></execute></permissions>',
        outputs: '<output name="answer" required="true">The answer</output>',
      }),
    );
    await fx.sign('directive:acme/leak');
    const server = await fx.serve({
      turns: [
        { tool_calls: [{ name: 'rye_bash', input: { command: 'env; echo marker-$HOME' } }] },
        { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] },
      ],
    });
    fx.env.ANTHROPIC_API_KEY = 'sk-ant-secret-0628';
    fx.env.OPENAI_API_KEY = 'sk-openai-secret-0628';
    fx.refresh();
    const result = await fx.rye.execute({ item_id: 'directive:acme/leak', thread: 'fork' });
    expect(result.status, JSON.stringify(result)).toBe('success');
    // The provider itself was called with the key.
    expect(JSON.stringify(server.requests[0]!.headers)).toContain('sk-ant-secret-0628');
    const answer = JSON.stringify(server.requests[1]!.body);
    expect(answer).toContain('marker-');
    expect(answer).toContain('ANTHROPIC_BASE_URL');
    expect(answer).not.toContain('sk-ant-secret-0628');
    expect(answer).not.toContain('sk-openai-secret-0628');
    for (const file of filesUnder(join(fx.project, '.ai'))) {
      expect(readFileSync(file, 'latin1'), file).not.toContain('secret-0628');
    }
  }, 60_000);

  it("and the span exporter's (OTEL_EXPORTER_OTLP_*HEADERS) are not in a tool's environment either", async () => {
    const fx = fixture();
    await fx.write(
      '.ai/directives/acme/leak.md',
      directive('leak', {
        metadata:
          '<model tier="general" provider="anthropic"/><permissions><execute><tool>rye.bash</tool></execute></permissions>',
        outputs: '<output name="answer" required="true">The answer</output>',
      }),
    );
    await fx.sign('directive:acme/leak');
    const server = await fx.serve({
      turns: [
        { tool_calls: [{ name: 'rye_bash', input: { command: 'env; echo marker-$HOME' } }] },
        { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] },
      ],
    });
    fx.env.OTEL_EXPORTER_OTLP_HEADERS = 'authorization=Bearer otlp-secret-1129';
    fx.env.OTEL_EXPORTER_OTLP_TRACES_HEADERS = 'x-api-key=otlp-traces-secret-1129';
    fx.env.OTEL_SERVICE_NAME = 'svc-visible-1129';
    fx.refresh();
    const result = await fx.rye.execute({ item_id: 'directive:acme/leak', thread: 'fork' });
    expect(result.status, JSON.stringify(result)).toBe('success');
    const answer = JSON.stringify(server.requests[1]!.body);
    // Other OpenTelemetry settings still reach the tool; only the credentials are withheld.
    expect(answer).toContain('svc-visible-1129');
    expect(answer).not.toContain('secret-1129');
  }, 60_000);

  it("of another provider the thread does not run on are withheld too (a signed groq.yaml's key)", async () => {
    const fx = fixture();
    await fx.write(
      '.ai/tools/rye/agent/providers/groq.yaml',
      [
        'version: "1.0.0"',
        'tool_id: groq',
        'tool_type: provider',
        'executor_id: null',
        'category: rye/agent/providers',
        'description: "Groq (OpenAI compatible)"',
        'wire_format: openai',
        'detect_env: [GROQ_API_KEY]',
        'tier_mapping: {fast: llama-3.1-8b-instant}',
        'pricing: {llama-3.1-8b-instant: {input: 0.05, output: 0.08}}',
        'config:',
        '  url: "https://api.groq.com/openai/v1/chat/completions"',
        '  auth: {type: bearer, token: "${GROQ_API_KEY}"}',
        '  headers: {X-Team: "${GROQ_TEAM_TOKEN:-none}"}',
        '',
      ].join('\n'),
    );
    await fx.sign('tool:rye/agent/providers/groq');
    await fx.write(
      '.ai/directives/acme/leak.md',
      directive('leak', {
        metadata:
          '<model tier="general" provider="anthropic"/><permissions><execute><tool>rye.bash</tool></execute></permissions>',
        outputs: '<output name="answer" required="true">The answer</output>',
      }),
    );
    await fx.sign('directive:acme/leak');
    const server = await fx.serve({
      turns: [
        { tool_calls: [{ name: 'rye_bash', input: { command: 'env; echo marker-$HOME' } }] },
        { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] },
      ],
    });
    fx.env.GROQ_API_KEY = 'gsk-secret-1129';
    fx.env.GROQ_TEAM_TOKEN = 'team-secret-1129';
    fx.refresh();
    const result = await fx.rye.execute({ item_id: 'directive:acme/leak', thread: 'fork' });
    expect(result.status, JSON.stringify(result)).toBe('success');
    const answer = JSON.stringify(server.requests[1]!.body);
    expect(answer).toContain('marker-');
    expect(answer).not.toContain('secret-1129');
  }, 60_000);

  it('are not in the environment of an async tool run the model starts, nor of its runner', async () => {
    const fx = fixture();
    await fx.write(
      '.ai/directives/acme/leak.md',
      directive('leak', {
        metadata:
          '<model tier="general" provider="anthropic"/><permissions><execute><tool>rye.*</tool></execute></permissions>',
        outputs: '<output name="answer" required="true">The answer</output>',
      }),
    );
    await fx.sign('directive:acme/leak');
    // The detached tool writes its own and its runner's environment where the model can read it.
    const command =
      'env > .ai/async-env.tmp; tr "\\0" "\\n" < /proc/$PPID/environ >> .ai/async-env.tmp; mv .ai/async-env.tmp .ai/async-env.txt; env';
    const server = await fx.serve({
      turns: [
        {
          tool_calls: [
            {
              name: 'rye_execute',
              input: { item_id: 'tool:rye/bash', parameters: { command }, async: true },
            },
          ],
        },
        {
          tool_calls: [
            {
              name: 'rye_bash',
              input: {
                command:
                  'for i in $(seq 300); do [ -f .ai/async-env.txt ] && break; sleep 0.1; done; cat .ai/async-env.txt',
              },
            },
          ],
        },
        { tool_calls: [{ name: 'rye_directive_return', input: { answer: 'done' } }] },
      ],
    });
    fx.env.ANTHROPIC_API_KEY = 'sk-ant-secret-0629';
    fx.env.OPENAI_API_KEY = 'sk-openai-secret-0629';
    fx.refresh();
    const result = await fx.rye.execute({ item_id: 'directive:acme/leak', thread: 'fork' });
    expect(result.status, JSON.stringify(result)).toBe('success');
    const seen = readFileSync(join(fx.project, '.ai', 'async-env.txt'), 'utf8');
    expect(seen).toContain('ANTHROPIC_BASE_URL');
    expect(seen).not.toContain('secret-0629');
    expect(JSON.stringify(server.requests.map((request) => request.body))).not.toContain('secret-0629');
    // The run's spawn.log, the registry and the transcripts, once the run has recorded its result.
    await new Promise((done) => setTimeout(done, 1000));
    for (const file of filesUnder(join(fx.project, '.ai'))) {
      expect(readFileSync(file, 'latin1'), file).not.toContain('secret-0629');
    }
  }, 90_000);
});
