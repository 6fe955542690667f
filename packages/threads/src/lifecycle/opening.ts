/**
 * How a run opens its conversation: the system prompt (`build_system_prompt` hooks and the
 * directive's context), the first user message (`thread_started` hooks around the directive
 * prompt), or, for a continuation, the carried conversation with the continuation prompt.
 */
import { clipText } from '@ryeos/lillux';
import type { HookRunner } from '../hook-runner.js';
import type { ThreadHost } from '../host.js';
import { continuationPrompt, linkContinuation, withPrompt } from '../orchestration/continuation.js';
import { threadDir } from '../persistence/paths.js';
import type { PreparedContinuation, PreparedThread } from '../prepared.js';
import type { ChatMessage } from '../provider/types.js';
import type { ThreadLog } from '../runner/loop.js';
import type { PaletteEntry } from '../runner/palette.js';
import { joinBlocks } from '../runner/prompt.js';
import type { ThreadCost } from '../store/types.js';
import { textModeToolsPrompt } from '../streaming/text-prompt.js';
import type { RunPlace } from './run-types.js';

export interface Opening {
  system: string;
  messages: ChatMessage[];
  /** A run resumed from its transcript: what its earlier process already spent. */
  resumedFrom?: { cost: ThreadCost };
}

export interface OpeningInput {
  host: ThreadHost;
  place: RunPlace;
  prepared: PreparedThread;
  hooks: HookRunner;
  log: ThreadLog;
  /** Tools are described in the system prompt when the model writes its calls as text. */
  textModeTools: PaletteEntry[] | undefined;
}

/** The system prompt and the first messages, each recorded in the transcript as it is made. */
export async function openConversation(input: OpeningInput): Promise<Opening> {
  const { hooks, log, prepared, place } = input;
  const { carried } = prepared;
  const { context, limits } = prepared;
  const baseContext = hookContext(prepared);
  const built = await hooks.context('build_system_prompt', baseContext);
  const system = joinBlocks(
    built.before,
    built.after,
    context.system,
    input.textModeTools ? textModeToolsPrompt(input.textModeTools) : '',
  );
  log.emit('system_prompt', { text: system, layers: built.blocks.map((b) => b.id) });
  const started = carried
    ? await hooks.context('thread_continued', {
        ...baseContext,
        previous_thread_id: carried.previous_thread_id,
      })
    : await hooks.context('thread_started', {
        ...baseContext,
        project_path: input.host.projectPath,
        depth: limits.depth,
        parent_thread_id: place.parent?.threadId ?? 'none',
        spend_limit: limits.spend,
        max_turns: limits.turns,
        capabilities_summary: prepared.capabilities.join(', '),
      });
  for (const [position, text, blocks] of [
    [
      'before',
      joinBlocks(started.before, context.before),
      started.blocks.filter((b) => b.position !== 'after'),
    ],
    ['after', joinBlocks(context.after, started.after), started.blocks.filter((b) => b.position === 'after')],
  ] as const) {
    if (text)
      log.emit('context_injected', {
        position,
        blocks: blocks.length ? blocks : [{ id: 'directive-context', content: text, role: 'user' }],
      });
  }
  if (!carried) {
    const first = joinBlocks(
      started.before,
      context.before,
      prepared.directive_prompt,
      context.after,
      started.after,
    );
    return { system, messages: [{ role: 'user', content: first }] };
  }
  const prompt = continuationPrompt({
    previousThreadId: carried.previous_thread_id,
    directiveId: place.directiveId,
    directivePrompt: joinBlocks(context.before, prepared.directive_prompt, context.after),
    ...(carried.message ? { message: carried.message } : {}),
    handoff: carried.handoff,
    carried: carried.messages.length > 0,
  });
  const messages = withPrompt(carried.messages, joinBlocks(started.before, prompt, started.after));
  await linkToPrevious(input, carried);
  return { system, messages };
}

/** What every context hook of this thread is told about it. */
export function hookContext(prepared: PreparedThread): Record<string, unknown> {
  return {
    directive: prepared.directive_id,
    directive_body: prepared.directive_body,
    model: prepared.model.modelId,
    limits: prepared.limits,
    inputs: prepared.inputs,
  };
}

/** Links a continuation to its previous thread before it runs; a resume also notes it in the old transcript. */
async function linkToPrevious(input: OpeningInput, carried: PreparedContinuation): Promise<void> {
  const { place } = input;
  await linkContinuation({
    store: place.store,
    stateDir: (id) => threadDir(place.stateRoot, id),
    previous: carried.record,
    nextThreadId: place.threadId,
    signer: place.signer,
    ...(carried.handoff
      ? {}
      : {
          event: {
            type: 'thread_resumed',
            payload: {
              new_thread_id: place.threadId,
              directive: place.directiveId,
              message_preview: clipText(carried.message ?? '', 200),
            },
          },
        }),
  });
}
