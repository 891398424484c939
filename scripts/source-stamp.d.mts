/** Types of source-stamp.mjs, for the tests that run dist/. */
export function sourceStamp(root?: string): string;
export function staleBuild(root?: string): string | null;
