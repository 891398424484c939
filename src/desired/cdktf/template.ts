/** Terraform's string templates, and the references netform resolves in them. */

const NAME = '[A-Za-z_][A-Za-z0-9_-]*';

export const VARIABLE_REFERENCE = new RegExp(`^var\\.(${NAME})$`);

export const USER_REFERENCE = new RegExp(`^firezone_user\\.(${NAME})\\.(id|email)$`);

export type TemplatePart = { text: string } | { expression: string };

/**
 * The parts of a Terraform string template: literal text and `${...}` interpolations, with the
 * `$${` and `%%{` escapes undone. Directives (`%{ if }`) are refused: netform does not evaluate them.
 */
export function parseTemplate(template: string): TemplatePart[] | { error: string } {
  const parts: TemplatePart[] = [];
  let text = '';
  let i = 0;
  while (i < template.length) {
    if (template.startsWith('$${', i) || template.startsWith('%%{', i)) {
      text += template.slice(i + 1, i + 3);
      i += 3;
    } else if (template.startsWith('%{', i)) {
      return { error: 'template directives (%{ ... }) are not supported' };
    } else if (template.startsWith('${', i)) {
      let depth = 1;
      let j = i + 2;
      for (; j < template.length && depth > 0; j++) {
        if (template[j] === '{') depth++;
        else if (template[j] === '}') depth--;
      }
      if (depth > 0) return { error: 'an interpolation "${" is not closed' };
      if (text !== '') parts.push({ text });
      text = '';
      parts.push({ expression: template.slice(i + 2, j - 1).trim() });
      i = j;
    } else {
      text += template[i];
      i++;
    }
  }
  if (text !== '' || parts.length === 0) parts.push({ text });
  return parts;
}
