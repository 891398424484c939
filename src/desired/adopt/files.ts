/**
 * The desired-state files adopt edits, held as text between its rounds: each round's edits are
 * made on a YamlFileEditor of a file's text and become its new text at the round's end. Nothing
 * here touches the disk.
 */
import { join } from 'node:path';
import { displayPath } from '../files.js';
import { YamlFileEditor } from './text-edit.js';

export interface AdoptFile {
  /** The path as found (a symlink stays a symlink here: where it is written is decided on writing). */
  path: string;
  /** As shown to people and as the loader names it in source locations. */
  display: string;
  /** The file's text before adopt (null: adopt creates it). */
  original: string | null;
  text: string;
}

export class AdoptFiles {
  readonly #files = new Map<string, AdoptFile>();
  #editors = new Map<string, YamlFileEditor>();
  #created = false;

  constructor(
    /** The folder named with -f (new files go there), or null when -f names one file. */
    readonly folder: string | null,
    files: { path: string; text: string }[],
  ) {
    for (const { path, text } of files) {
      const display = displayPath(path);
      this.#files.set(display, { path, display, original: text, text });
    }
  }

  get list(): AdoptFile[] {
    return [...this.#files.values()];
  }

  has(display: string): boolean {
    return this.#files.has(display);
  }

  /** The display name of a path (`--into`, a new file in the folder). */
  displayOf(path: string): string {
    return displayPath(path);
  }

  /** The path of a new file named `name` in the folder. */
  pathInFolder(name: string): string {
    return join(this.folder ?? '.', name);
  }

  /** The editor of a file for this round. */
  editor(display: string): YamlFileEditor {
    let editor = this.#editors.get(display);
    if (!editor) {
      const file = this.#files.get(display);
      if (!file) throw new Error(`adopt: ${display} is not one of the files read`);
      editor = new YamlFileEditor(file.text);
      this.#editors.set(display, editor);
    }
    return editor;
  }

  /** A new file with `text` (adopt's own), edited like the others afterwards. */
  create(path: string, text: string): string {
    const display = displayPath(path);
    this.#files.set(display, { path, display, original: null, text });
    this.#created = true;
    return display;
  }

  /** Ends a round: each edited file's text becomes the edits' result. Whether anything changed. */
  endRound(): boolean {
    let changed = this.#created;
    this.#created = false;
    for (const [display, editor] of this.#editors) {
      if (!editor.changed) continue;
      const text = editor.result();
      const file = this.#files.get(display)!;
      if (text !== file.text) changed = true;
      file.text = text;
    }
    this.#editors = new Map();
    return changed;
  }

  /** Whether any file differs from what was read (or is new). */
  get changedFiles(): AdoptFile[] {
    return this.list.filter((f) => f.text !== f.original);
  }
}
