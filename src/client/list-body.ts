/**
 * A list answer, `{"data":[...]}`, read as it arrives: each item is parsed and handed to `read` on
 * its own, so a list of 100,000 objects never exists as one text, one buffer, or one tree of raw
 * objects waiting to be converted. For the 60,000 objects of the benchmark fleet that is about 70 MB
 * less at the peak of a plan, for the same time as one JSON.parse of the whole text (bench/RESULTS.md,
 * "Plan memory: list answers read as they arrive").
 *
 * Items are found without a tokenizer. From the start of an item, each `}` is a candidate end,
 * tried with JSON.parse until one parses. That is always the item's true end: a JSON object is
 * self-delimiting, so a text starting where the item starts parses as one object only if it ends
 * where the item ends; a cut inside a string or a nested object does not parse. Items of /v0
 * lists have no nested objects, so the first candidate is nearly always the one.
 *
 * Anything else falls back to JSON.parse of the text, with the same result and the same errors as
 * reading the whole answer at once:
 * - a body that does not start with `{"data":[` (whitespace, other keys first, not JSON at all) is
 *   kept whole, and `end` hands it back (`whole`);
 * - an item that does not start with `{`, or too many candidates that did not parse, stop the
 *   item-by-item reading: the rest of the body is kept and parsed at the end, behind the items
 *   already read.
 */

/** The compact start of a list answer: what our server and Firezone's Phoenix views send. */
const PREFIX = '{"data":[';
/** Failed candidates, over the whole body, before the rest is parsed whole instead. */
const MAX_FAILED_CANDIDATES = 1000;

const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;

export type ListBodyEnd<T> =
  /** The body was read item by item, and its end checked: these are its items, each read. */
  | { items: T[] }
  /** The body is valid JSON, but its `data` is not the list read (not a list, or a later `data` key's). */
  | { data: unknown }
  /** The body was not a compact list answer: here it is whole, to be read as any other answer. */
  | { whole: string }
  /** The body is not valid JSON. */
  | { invalid: true };

/**
 * What the consumed text ends with, inside the list: its `[`, an item, or an item and a comma.
 * At the end, the rest is parsed behind a stand-in for it (see ListBody.end).
 */
type Behind = 'bracket' | 'item' | 'comma';
/** Stands for the items read so far; no server sends it, so finding it first says whose `data` won. */
const PLACEHOLDER = '\u0000 items read before';
const STAND_IN: Record<Behind, string> = {
  bracket: PREFIX,
  item: `${PREFIX}${JSON.stringify(PLACEHOLDER)}`,
  comma: `${PREFIX}${JSON.stringify(PLACEHOLDER)},`,
};

export class ListBody<T> {
  readonly #read: (item: unknown) => T;
  readonly #items: T[] = [];
  /** 'start': before the prefix; 'items': item by item; 'rest': the rest is kept for the end; 'whole': all is kept. */
  #mode: 'start' | 'items' | 'rest' | 'whole' = 'start';
  /** Text not yet consumed ('start' and 'items'). */
  #text = '';
  /** The text kept for the end ('rest' and 'whole'). */
  #pieces: string[] = [];
  #behind: Behind = 'bracket';
  /** Where the next candidate `}` is looked for, from the start of #text (those before it did not parse). */
  #searchFrom = 0;
  #failed = 0;

  constructor(read: (item: unknown) => T) {
    this.#read = read;
  }

  /** The next piece of the body's text. Throws what `read` throws. */
  push(piece: string): void {
    if (this.#mode === 'rest' || this.#mode === 'whole') {
      this.#pieces.push(piece);
      return;
    }
    this.#text = this.#text === '' ? piece : this.#text + piece;
    if (this.#mode === 'start') {
      if (this.#text.length < PREFIX.length) {
        if (!PREFIX.startsWith(this.#text)) this.#keepFrom(0, 'whole');
        return;
      }
      if (!this.#text.startsWith(PREFIX)) return this.#keepFrom(0, 'whole');
      this.#text = this.#text.slice(PREFIX.length);
      this.#mode = 'items';
    }
    this.#readItems();
  }

  /** At the end of the body. Throws what `read` throws. */
  end(): ListBodyEnd<T> {
    if (this.#mode === 'start' || this.#mode === 'whole') return { whole: this.#rest() };
    // The rest continues the list where the consumed text stopped: behind a stand-in for what
    // was consumed, it parses exactly when the whole body would have.
    let parsed: unknown;
    try {
      parsed = JSON.parse(STAND_IN[this.#behind] + this.#rest());
    } catch {
      return { invalid: true };
    }
    const data = (parsed as { data: unknown }).data;
    if (this.#behind === 'bracket') {
      if (!Array.isArray(data)) return { data };
    } else if (!Array.isArray(data) || data[0] !== PLACEHOLDER) {
      // A later `data` key won, as it does in JSON.parse: the items read were not the answer's.
      return { data };
    }
    for (let i = this.#behind === 'bracket' ? 0 : 1; i < data.length; i++) this.#items.push(this.#read(data[i]));
    return { items: this.#items };
  }

  #readItems(): void {
    const text = this.#text;
    let at = 0;
    for (;;) {
      at = skipWhitespace(text, at);
      if (at === text.length) break;
      const c = text.charCodeAt(at);
      if (this.#behind === 'item') {
        // Not a comma: the list's end (or a mistake), checked at the end with the rest.
        if (c !== COMMA) return this.#keepFrom(at, 'rest');
        this.#behind = 'comma';
        at++;
        continue;
      }
      if (c !== OPEN_BRACE) return this.#keepFrom(at, 'rest');
      const item = this.#parseItem(text, at);
      if (item === undefined) break; // its end has not arrived yet
      if (item === null) return this.#keepFrom(at, 'rest');
      this.#items.push(this.#read(item.value));
      this.#behind = 'item';
      this.#searchFrom = 0;
      at = item.end;
    }
    this.#text = text.slice(at);
  }

  /**
   * The item starting at `start`: its value and the index after it; undefined when its end has
   * not arrived yet; null when too many candidates failed.
   */
  #parseItem(text: string, start: number): { value: unknown; end: number } | undefined | null {
    let close = text.indexOf('}', start + this.#searchFrom);
    while (close !== -1) {
      try {
        return { value: JSON.parse(text.slice(start, close + 1)), end: close + 1 };
      } catch {
        if (++this.#failed > MAX_FAILED_CANDIDATES) return null;
        close = text.indexOf('}', close + 1);
      }
    }
    // The item will start #text once the consumed text is dropped: next time, look past what was tried.
    this.#searchFrom = text.length - start;
    return undefined;
  }

  /** Keeps the text from `at` on, and all that follows, for the end. */
  #keepFrom(at: number, mode: 'rest' | 'whole'): void {
    this.#pieces = [this.#text.slice(at)];
    this.#text = '';
    this.#mode = mode;
  }

  #rest(): string {
    return this.#mode === 'rest' || this.#mode === 'whole' ? this.#pieces.join('') : this.#text;
  }
}

function skipWhitespace(text: string, at: number): number {
  for (;;) {
    const c = text.charCodeAt(at);
    // JSON's whitespace: space, tab, line feed, carriage return.
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return at;
    at++;
  }
}
