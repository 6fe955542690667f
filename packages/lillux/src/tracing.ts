/**
 * OpenTelemetry spans, at no cost when nobody traces: `@opentelemetry/api` (an optional peer) is
 * imported only once a tracer provider is registered in this process, or once
 * `OTEL_EXPORTER_OTLP_ENDPOINT` asks for an export and the optional SDK is installed. Until then
 * `tracer()` answers `undefined` synchronously, having imported nothing.
 */
import type * as OtelApi from '@opentelemetry/api';

export type SpanAttributeValue = string | number | boolean | string[];
export type SpanAttributes = Record<string, SpanAttributeValue | undefined>;

export interface SpanOptions {
  attributes?: SpanAttributes;
  /**
   * The parent: a span of this process, or a W3C `traceparent` to continue (a run handed over
   * from another process). By default the span active where it starts, or the entry point's
   * `TRACEPARENT`.
   */
  parent?: TraceSpan | string;
  /** Epoch milliseconds, for a span recorded after the fact. */
  startTime?: number;
  kind?: 'internal' | 'client';
}

export interface TraceSpan {
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the span failed: a one-line reason and its class (`error.type`, e.g. an error code). */
  fail(message: string, type?: string): void;
  end(endTime?: number): void;
  /** Runs `fn` with this span as the parent of every span started inside it, across awaits too. */
  within<T>(fn: () => T): T;
  /** This span as a W3C `traceparent`, for a process that continues the trace. */
  traceParent(): string;
}

export interface Tracer {
  start(name: string, options?: SpanOptions): TraceSpan;
  /** The span active here as a W3C `traceparent`, if any. */
  activeTraceParent(): string | undefined;
}

/** Where `@opentelemetry/api` 1.x registers its globals (provider, context manager, propagator). */
const API_GLOBAL = Symbol.for('opentelemetry.js.api.1');
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const TRACER_NAME = 'ryeos';

function providerRegistered(): boolean {
  const globals = (globalThis as Record<symbol, { trace?: unknown } | undefined>)[API_GLOBAL];
  return globals?.trace !== undefined;
}

type Environment = Readonly<Record<string, string | undefined>>;

interface TracingState {
  /** The environment of the process's entry point (`traceFromEnvironment`); none until it is given. */
  environment: Environment;
  loading?: Promise<Tracer | undefined>;
  loaded?: Tracer;
  shutdown?: () => Promise<void>;
}

/**
 * One state per process, not per copy of this module: a bin may hold several copies (its
 * CommonJS bundle and the ES modules it loads later), and the spans one records must go out when
 * another flushes.
 */
const STATE_KEY = Symbol.for('ryeos.lillux.tracing.1');

function tracingState(): TracingState {
  const globals = globalThis as Record<symbol, TracingState | undefined>;
  let found = globals[STATE_KEY];
  if (!found) {
    found = { environment: {} };
    globals[STATE_KEY] = found;
  }
  return found;
}

/**
 * Tells tracing the environment its entry point was started with, read once there:
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (an export is asked for) and `TRACEPARENT` (the caller's trace).
 * Costs nothing: nothing is loaded until a span is started.
 */
export function traceFromEnvironment(env: Environment): void {
  tracingState().environment = env;
}

/** Whether the environment asks for an OTLP export (the standard variables). */
export function otlpRequested(env: Environment = tracingState().environment): boolean {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * The tracer, or `undefined` (synchronously, nothing imported) when nothing traces. Await the
 * promise it may answer; it resolves to `undefined` when the optional packages are missing.
 */
export function tracer(): Promise<Tracer | undefined> | undefined {
  const state = tracingState();
  if (state.loading) return state.loading;
  if (!providerRegistered() && !otlpRequested()) return undefined;
  state.loading = loadTracer();
  return state.loading;
}

/** The tracer if one was loaded already (no import, no wait): for code that only continues a trace. */
export function loadedTracer(): Tracer | undefined {
  return tracingState().loaded;
}

/**
 * Sends the spans still buffered by an OTLP export this module set up, and ends it: call once,
 * as the process is about to exit.
 */
export async function flushTracing(): Promise<void> {
  await tracingState()
    .shutdown?.()
    .catch(() => undefined);
}

async function loadTracer(): Promise<Tracer | undefined> {
  const state = tracingState();
  try {
    if (!providerRegistered()) {
      const { registerOtlpExport } = await import('./tracing-otlp.js');
      state.shutdown = await registerOtlpExport();
      if (!state.shutdown) return undefined;
    }
    const api = await import('@opentelemetry/api');
    state.loaded = wrapTracer(api);
    return state.loaded;
  } catch {
    // The optional API is not installed (or not a 1.x): tracing stays off.
    return undefined;
  }
}

/** Parses a W3C `traceparent`; anything else (a hostile or garbled value) is ignored. */
function remoteParent(api: typeof OtelApi, value: string | undefined): OtelApi.Context | undefined {
  const match = value ? TRACEPARENT.exec(value.trim()) : null;
  if (!match || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return undefined;
  const spanContext: OtelApi.SpanContext = {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16) & 1,
    isRemote: true,
  };
  return api.trace.setSpanContext(api.ROOT_CONTEXT, spanContext);
}

function formatTraceParent(span: OtelApi.Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

function withoutUndefined(attributes: SpanAttributes | undefined): OtelApi.Attributes {
  const out: OtelApi.Attributes = {};
  for (const [key, value] of Object.entries(attributes ?? {})) if (value !== undefined) out[key] = value;
  return out;
}

/** The OpenTelemetry span behind each span this module handed out. */
const otelSpans = new WeakMap<TraceSpan, OtelApi.Span>();

function wrapTracer(api: typeof OtelApi): Tracer {
  const otel = api.trace.getTracer(TRACER_NAME);
  const parentOf = (options: SpanOptions): OtelApi.Context => {
    const { parent } = options;
    const local = typeof parent === 'object' ? otelSpans.get(parent) : undefined;
    if (local) return api.trace.setSpan(api.ROOT_CONTEXT, local);
    const explicit = typeof parent === 'string' ? remoteParent(api, parent) : undefined;
    if (explicit) return explicit;
    const active = api.context.active();
    if (api.trace.getSpan(active)) return active;
    return remoteParent(api, tracingState().environment.TRACEPARENT) ?? active;
  };
  return {
    start(name, options = {}) {
      const span = otel.startSpan(
        name,
        {
          attributes: withoutUndefined(options.attributes),
          kind: options.kind === 'client' ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL,
          ...(options.startTime !== undefined ? { startTime: options.startTime } : {}),
        },
        parentOf(options),
      );
      const wrapped: TraceSpan = {
        setAttributes: (attributes) => span.setAttributes(withoutUndefined(attributes)),
        fail: (message, type) => {
          span.setStatus({ code: api.SpanStatusCode.ERROR, message: message.split('\n')[0]!.slice(0, 500) });
          span.setAttribute('error.type', type ?? '_OTHER');
        },
        end: (endTime) => span.end(endTime),
        within: (fn) => api.context.with(api.trace.setSpan(api.context.active(), span), fn),
        traceParent: () => formatTraceParent(span),
      };
      otelSpans.set(wrapped, span);
      return wrapped;
    },
    activeTraceParent() {
      const span = api.trace.getSpan(api.context.active());
      return span ? formatTraceParent(span) : undefined;
    },
  };
}
