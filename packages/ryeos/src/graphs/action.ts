/** What a node or a hook runs: an `execute` of one item, before or after interpolation. */
export interface GraphAction {
  primary?: string;
  item_type?: string;
  item_id: string;
  params?: Record<string, unknown>;
  thread?: string;
  async?: boolean;
}
