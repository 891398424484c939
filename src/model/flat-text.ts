/**
 * The same text, held as one string. A text built piece by piece (`${a}/${b}`, a path made segment
 * by segment) is kept by V8 as a tree of its pieces until it is read: several objects where one
 * would do, each marked by every garbage collection for as long as the text is kept. Texts kept
 * for the whole run (keys, canonical blocks, source paths: tens of thousands on a fleet) are made
 * one string here: reading a character flattens it, and the collector drops the pieces.
 */
export function flatText(text: string): string {
  // Shorter texts are never made trees.
  if (text.length > 12) text.charCodeAt(0);
  return text;
}
