/** Types of email-table.mjs, for the test that regenerates the committed table. */
export const TABLE_PATH: string;
export function tableText(): string;
