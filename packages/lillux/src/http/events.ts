/**
 * What a stream hands its sinks and how a failing sink is reported: its own module because both
 * the sinks and the stream options that name them use it.
 */

export interface SseEvent {
  /** `message` when the stream named none. */
  event: string;
  data: string;
  id?: string;
}

export interface EventSink {
  readonly name: string;
  write(event: SseEvent): void | Promise<void>;
  close?(): void | Promise<void>;
}

export interface SinkError {
  sink: string;
  /** The first error of that sink, with ` (+N more)` when it failed again. */
  error: string;
}
