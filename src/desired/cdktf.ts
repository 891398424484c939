/** Placeholder until the CDKTF issue lands: reading a synthesized stack is refused clearly. */
import type { LoadOptions, LoadResult } from './types.js';

export async function loadCdktfStack(path: string, _options: LoadOptions = {}): Promise<LoadResult> {
  return { ok: false, diagnostics: [{ file: path, message: 'reading a CDKTF stack is not available in this build yet' }] };
}
