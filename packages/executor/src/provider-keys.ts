/**
 * The shipped LLM providers' key variables. A warm worker outlives the call that started it, so
 * another process of the user (a managed thread's `bash` reading `/proc/<pid>/environ`) could read
 * them there: warm workers start without them unless a tool's signed `env_config` names one.
 */
export const PROVIDER_KEY_NAMES: readonly string[] = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'OPENAI_API_KEY',
  'OPENROUTER_API_KEY',
];

/**
 * The OpenTelemetry exporter's credentials (a collector's auth headers): as secret as a provider
 * key, and withheld wherever those are.
 */
export const TELEMETRY_KEY_NAMES: readonly string[] = [
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'OTEL_EXPORTER_OTLP_METRICS_HEADERS',
  'OTEL_EXPORTER_OTLP_LOGS_HEADERS',
];
