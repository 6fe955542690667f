/** Where the `ryeos-remote` commands write and read: the process's streams, or a test's. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  stdin(): Promise<string>;
}
