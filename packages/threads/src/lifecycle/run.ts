/**
 * Run, the second phase of a thread (wherever the job lands): from a `PreparedThread`, the
 * transcript opened as the durable log, the conversation opened (or, when an earlier process of
 * this run was killed, taken up where its transcript stands: run-resume.ts), then the turn loop
 * until the thread completes, fails, is cancelled or hands off. What finalize needs comes back
 * with it.
 */
import { join } from 'node:path';
import { HookRunner } from '../hook-runner.js';
import type { ThreadHost } from '../host.js';
import { writeCapabilitiesMd } from '../persistence/capabilities-md.js';
import { liveKnowledgeTranscript } from '../persistence/live-knowledge-transcript.js';
import { ensureThreadDir } from '../persistence/paths.js';
import { transcriptSharer } from '../persistence/shared-records.js';
import { TranscriptWriter } from '../persistence/transcript.js';
import type { PreparedThread } from '../prepared.js';
import { providerCredentialNames, withCredentialsWithheld } from '../provider/credentials.js';
import { createModel } from '../provider/model-factory.js';
import { wireFormatOf } from '../provider/providers.js';
import { onFirstRequest } from '../runner/first-request.js';
import { type LoopResult, type LoopTiming, runLoop, type ThreadLog } from '../runner/loop.js';
import { type Palette, paletteOfEntries } from '../runner/palette.js';
import { type ThreadSpans, threadSpans } from '../runner/thread-spans.js';
import { warmPaletteTools } from '../runner/warm-workers.js';
import type { ThreadCost } from '../store/types.js';
import { streamModeOf } from '../streaming/config.js';
import { createSinks, FanOut } from '../streaming/sinks.js';
import { TextToolParser } from '../streaming/text-parser.js';
import type { ForkRequest, RunThread } from '../thread-request.js';
import { type CancelWatch, watchCancellation } from './cancel-watch.js';
import { loopOptions } from './loop-options.js';
import { type Opening, type OpeningInput, openConversation } from './opening.js';
import { readRunResume, resumedOpening } from './run-resume.js';
import type { RunPlace } from './run-types.js';

/** How long a thread waits for its stream sinks to flush before its result goes out without them. */
const SINK_CLOSE_GRACE_MS = 10;

/**
 * What the caller asked that the run still needs: its signal, what a handoff asks for again, and
 * (a queued run) the signal to hand the thread back before its next turn.
 */
export type RunRequest = Pick<
  ForkRequest,
  'model' | 'limitOverrides' | 'signal' | 'onEvent' | 'traceParent'
> & {
  handBack?: AbortSignal;
};

export interface RunInput {
  host: ThreadHost;
  request: RunRequest;
  place: RunPlace;
  prepared: PreparedThread;
  runThread: RunThread;
  /** The thread's trace spans (`runSpans`), when a trace is being recorded; its caller ends them. */
  spans?: ThreadSpans;
}

/** A run that has ended, with the open records finalize seals. */
export interface RunOutcome {
  /** The host as the thread's tools saw it (the provider's credentials withheld). */
  host: ThreadHost;
  place: RunPlace;
  dir: string;
  prepared: PreparedThread;
  result: LoopResult;
  cost: ThreadCost;
  timing: LoopTiming;
  writer: TranscriptWriter;
  hooks: HookRunner;
  cancelMarker: string;
  /** The continuation this thread handed off to, when it filled its context window. */
  handoffTo: string | undefined;
}

export async function runPhase(input: RunInput): Promise<RunOutcome> {
  const { prepared, place } = input;
  // Every tool this thread runs, a hook's included, runs without the provider's credentials.
  const withheldEnv = prepared.withheld_env ?? providerCredentialNames([prepared.model.config]);
  const host = withCredentialsWithheld(input.host, withheldEnv);
  const dir = ensureThreadDir(place.stateRoot, place.threadId);
  const palette = paletteOf(prepared);
  // Warming stops with the loop: nothing starts a worker for a thread that has ended.
  const warming = new AbortController();
  const { spans } = input;
  try {
    // The palette's workers start once the first request is out: starting one costs this process
    // ~10 ms that the request would otherwise wait for, and the model takes longer to answer.
    const model = onFirstRequest(createModel(prepared.model, host.settings.env), () => {
      void warmPaletteTools(host.executor, palette.entries, withheldEnv, warming.signal);
    });
    // A run whose earlier process was killed goes on from its transcript, read before it is appended to.
    const resumed = await readRunResume(host, dir, place.threadId, prepared);
    const writer = new TranscriptWriter(join(dir, 'transcript.jsonl'), place.threadId, place.signer);
    // With a shared store, what a call waits for includes the transcript's copy there: a worker
    // elsewhere that takes the thread up knows of every call that may have had an effect.
    const share = place.store.records
      ? transcriptSharer(place.store.records, dir, place.threadId, () => writer.flush())
      : undefined;
    const lease = place.lease;
    const durable = share ? () => writer.durable().then(share) : () => writer.durable();
    const observe = eventObserver(input.request.onEvent, spans);
    const log: ThreadLog = {
      // A run that lost its thread writes nothing more: the transcript is the new run's.
      emit: (eventType, payload) => {
        if (lease?.lost) return;
        writer.write(eventType, payload);
        observe?.(eventType, payload);
      },
      // The fsync runs while the next request goes out; the turn's tool calls wait for it.
      checkpoint: (turn) => void (lease?.lost ? undefined : writer.checkpointInBackground(turn)),
      // Before each tool call has an effect: the fencing check first, so a lost run neither runs it nor shares its copy.
      durable: lease ? () => lease.fence().then(durable) : durable,
    };
    const hooks = new HookRunner({
      hooks: prepared.hooks,
      host,
      threadId: place.threadId,
      log,
      suppress: prepared.context.suppressed,
    });
    const textParsed = prepared.model.config.tool_use?.mode === 'text_parsed';
    const opening = resumed
      ? await resumedOpening(resumed, prepared, log, place)
      : await openRun({
          host,
          place,
          prepared,
          hooks,
          log,
          textModeTools: textParsed ? palette.entries : undefined,
        });
    await writeCapabilitiesMd(dir, capabilityRows(palette), undefined, place.signer);
    const cancel = watchCancellation(dir, input.request.signal);
    let handoffTo: string | undefined;
    const streamConfig = prepared.model.config.config?.stream;
    const sinkConfigs = typeof streamConfig === 'object' ? streamConfig.sinks : undefined;
    const loop = await runWithSinks(host, sinkConfigs, dir, place, log, cancel, (onData) =>
      runLoop(
        loopOptions({
          host,
          place,
          dir,
          prepared,
          palette,
          opening,
          model,
          streamMode: streamModeOf(streamConfig, prepared.model.provider.toolId),
          textParser: textParsed ? () => textParserOf(prepared) : undefined,
          log,
          hooks,
          cancel,
          handBack: input.request.handBack,
          onData,
          onCheckpoint: liveKnowledgeTranscript({
            dir,
            projectPath: host.projectPath,
            record: prepared.record,
            signer: place.signer,
          }),
          runThread: input.runThread,
          onHandoff: (next) => {
            handoffTo = next;
          },
          ...(spans ? { spans } : {}),
        }),
      ).finally(() => warming.abort()),
    );
    return { host, place, dir, prepared, ...loop, writer, hooks, cancelMarker: cancel.marker, handoffTo };
  } finally {
    warming.abort();
  }
}

/** The spans of a thread about to run here (none, at no cost, when nothing traces). */
export function runSpans(
  place: RunPlace,
  prepared: PreparedThread,
  traceParent: string | undefined,
): Promise<ThreadSpans | undefined> {
  return threadSpans({
    threadId: place.threadId,
    directiveId: place.directiveId,
    modelId: prepared.model.modelId,
    providerName: wireFormatOf(prepared.model.config),
    ...(traceParent ? { traceParent } : {}),
  });
}

/** One observer of the transcript's events for the caller's hook and the spans, or none. */
function eventObserver(
  onEvent: RunRequest['onEvent'],
  spans: ThreadSpans | undefined,
): ((eventType: string, payload: Record<string, unknown>) => void) | undefined {
  if (!onEvent && !spans) return undefined;
  return (eventType, payload) => {
    spans?.observe(eventType, payload);
    try {
      onEvent?.(eventType, payload);
    } catch {
      // A watcher's failure is its own: the thread's record goes on.
    }
  };
}

/** A fresh run: what setup decided is noted, then the conversation is opened. */
function openRun(input: OpeningInput): Promise<Opening> {
  recordSetupNotes(input.log, input.prepared, input.place);
  return openConversation(input);
}

/** The palette the prepared thread carries, indexed by name. */
function paletteOf(prepared: PreparedThread): Palette {
  const { entries, warnings } = prepared.palette;
  return paletteOfEntries(entries, warnings);
}

/** What setup decided that the model's transcript should say: warnings, grants the parent took away. */
function recordSetupNotes(log: ThreadLog, prepared: PreparedThread, place: RunPlace): void {
  for (const message of prepared.warnings) log.emit('thread_warning', { message });
  const attenuated = prepared.attenuated_capabilities ?? [];
  if (attenuated.length) {
    log.emit('capabilities_attenuated', {
      grants: attenuated,
      parent_thread_id: place.parent?.threadId ?? null,
      kept: prepared.capabilities,
    });
  }
}

/** The palette as `capabilities.md` lists it. */
function capabilityRows(palette: Palette) {
  return palette.entries.map(({ name, description, schema, itemId, primary }) => ({
    name,
    description,
    schema,
    _item_id: itemId,
    _primary: primary,
  }));
}

function textParserOf(prepared: PreparedThread): TextToolParser {
  return new TextToolParser({
    toolParseBufferMax: prepared.streaming.toolParseBufferMax,
    textBufferMax: prepared.streaming.textBufferMax,
  });
}

/**
 * Runs the loop with the provider's optional raw-SSE sinks attached. They come only from the
 * (verified) provider item: an unsigned project config cannot send a thread's stream to a URL
 * of its choosing. Sinks are droppable: a local flush gets a few ms, the rest closes on its own
 * bound without holding the result (an unreachable UI once added up to 2 s to every thread).
 */
async function runWithSinks(
  host: ThreadHost,
  sinkConfigs: Parameters<typeof createSinks>[0],
  dir: string,
  place: RunPlace,
  log: ThreadLog,
  cancel: CancelWatch,
  loop: (onData: (data: string, turn: number) => void) => Promise<Awaited<ReturnType<typeof runLoop>>>,
): Promise<Awaited<ReturnType<typeof runLoop>>> {
  // A sink still closing once the loop ended has nowhere to warn: the transcript is being sealed.
  let sinkWarnings = true;
  const warn = (message: string) => {
    if (sinkWarnings) log.emit('sink_warning', { message });
  };
  const sinks = new FanOut(
    createSinks(sinkConfigs, { threadId: place.threadId, threadDir: dir, env: host.settings.env, warn }),
    warn,
  );
  try {
    return await loop((data, turn) => sinks.write({ threadId: place.threadId, turn, data, at: Date.now() }));
  } finally {
    cancel.stop();
    await sinks.closeWithin(SINK_CLOSE_GRACE_MS);
    sinkWarnings = false;
  }
}
