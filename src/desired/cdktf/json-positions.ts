/**
 * Where the values and keys of a JSON document (the stack) are written, from jsonc-parser's parse
 * tree; offsets become lines and columns with positions.ts, as for YAML.
 */
import { parseTree, type Node as JsonNode } from 'jsonc-parser';
import { columnAt, lineAt, lineStartsOf, type DocPath } from '../positions.js';

/**
 * Line and column of the values and keys of a JSON document. Each object's keys are indexed the
 * first time a path goes through it, so that a stack of thousands of resources is placed in
 * linear time.
 */
export class JsonPositions {
  readonly #root: JsonNode | undefined;
  readonly #properties = new Map<JsonNode, Map<string, JsonNode>>();
  readonly lineStarts: number[];

  constructor(text: string) {
    this.lineStarts = lineStartsOf(text);
    this.#root = parseTree(text, [], { disallowComments: true });
  }

  /** The property nodes of an object by key (the last one wins, as with JSON.parse). */
  propertiesOf(node: JsonNode): Map<string, JsonNode> {
    let properties = this.#properties.get(node);
    if (!properties) {
      properties = new Map();
      for (const property of node.children ?? []) {
        const name = property.children?.[0];
        if (name && typeof name.value === 'string') properties.set(name.value, property);
      }
      this.#properties.set(node, properties);
    }
    return properties;
  }

  /** The node of the value at `path` and of its key; the nearest enclosing value when it is not there. */
  find(path: DocPath): { node: JsonNode | undefined; keyNode: JsonNode | undefined; found: boolean } {
    let node = this.#root;
    let keyNode: JsonNode | undefined;
    for (const segment of path) {
      if (!node) break;
      keyNode = undefined;
      if (node.type === 'object' && typeof segment === 'string') {
        const property = this.propertiesOf(node).get(segment);
        if (!property) return { node, keyNode, found: false };
        keyNode = property.children?.[0];
        node = property.children?.[1];
      } else if (node.type === 'array' && typeof segment === 'number' && node.children?.[segment]) {
        node = node.children[segment];
      } else {
        return { node, keyNode, found: false };
      }
    }
    return { node, keyNode, found: true };
  }

  /** Where the value at `path` (or its key) is written; the nearest enclosing value when it is not there. */
  locate(path: DocPath, ofKey = false): { line: number; column: number } {
    const { node, keyNode } = this.find(path);
    return this.position((ofKey ? keyNode : undefined)?.offset ?? node?.offset ?? 0);
  }
  /** The 1-based line and column of an offset. */
  position(offset: number): { line: number; column: number } {
    const line = lineAt(this, offset);
    return { line, column: columnAt(this, offset, line) };
  }
}
