/**
 * The export `OTEL_EXPORTER_OTLP_ENDPOINT` asks for, when no tracer provider is registered:
 * the optional SDK packages (`@opentelemetry/sdk-trace-base`, `…/exporter-trace-otlp-http`,
 * `…/context-async-hooks`) send this process's spans over OTLP/HTTP. Loaded only then.
 */

/** What this module uses of the SDK packages (they are optional: no types are imported). */
interface SdkModules {
  base: {
    BasicTracerProvider: new (config: {
      spanProcessors: unknown[];
    }) => {
      shutdown(): Promise<void>;
    };
    BatchSpanProcessor: new (exporter: unknown) => unknown;
  };
  exporter: { OTLPTraceExporter: new () => unknown };
  hooks: { AsyncLocalStorageContextManager: new () => { enable(): unknown } };
  api: typeof import('@opentelemetry/api');
}

// Named through variables so no bundler tries to include them: they are the user's to install.
const BASE = '@opentelemetry/sdk-trace-base';
const EXPORTER = '@opentelemetry/exporter-trace-otlp-http';
const HOOKS = '@opentelemetry/context-async-hooks';

async function sdkModules(): Promise<SdkModules | undefined> {
  try {
    const [base, exporter, hooks, api] = await Promise.all([
      import(BASE),
      import(EXPORTER),
      import(HOOKS),
      import('@opentelemetry/api'),
    ]);
    return { base, exporter, hooks, api } as SdkModules;
  } catch {
    return undefined;
  }
}

/**
 * Registers an OTLP/HTTP exporting provider (the exporter reads the standard `OTEL_EXPORTER_OTLP_*`
 * variables itself); answers its shutdown (which flushes), or `undefined` when the SDK is missing.
 */
export async function registerOtlpExport(): Promise<(() => Promise<void>) | undefined> {
  const sdk = await sdkModules();
  if (!sdk) return undefined;
  const provider = new sdk.base.BasicTracerProvider({
    spanProcessors: [new sdk.base.BatchSpanProcessor(new sdk.exporter.OTLPTraceExporter())],
  });
  // Without a context manager no span would know its parent across an await.
  sdk.api.context.setGlobalContextManager(
    new sdk.hooks.AsyncLocalStorageContextManager().enable() as Parameters<
      typeof sdk.api.context.setGlobalContextManager
    >[0],
  );
  sdk.api.trace.setGlobalTracerProvider(
    provider as unknown as Parameters<typeof sdk.api.trace.setGlobalTracerProvider>[0],
  );
  return () => provider.shutdown();
}
