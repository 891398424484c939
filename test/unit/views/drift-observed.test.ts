/** What drift says it saw (src/views/drift-render.ts, src/views/drift.ts): secrets never shown, values escaped. */
import { describe, expect, it } from 'vitest';
import { observedOf } from '../../../src/model/observed.js';
import { driftText } from '../../../src/views/drift.js';
import { observationLines } from '../../../src/views/drift-render.js';
import { inertText, webhookName } from '../../../src/views/escape.js';

describe('drift observations', () => {
  it('names what was seen for each action', () => {
    expect([observedOf('delete'), observedOf('create'), observedOf('update'), observedOf('replace')]).toEqual([
      'live_only',
      'declared_only',
      'differs',
      'differs',
    ]);
    expect(observationLines({ action: 'update', label: 'user a@example.com', fields: [] }, inertText)).toEqual([
      'user a@example.com differs from the files',
    ]);
  });

  it('never shows a secret field value, whatever the field holds', () => {
    const lines = observationLines(
      {
        action: 'update',
        label: 'device a@example.com/laptop',
        fields: [
          { field: 'preshared_key', before: 'LIVE-SECRET', after: 'FILE-SECRET' },
          { field: 'note', before: 'x', after: 'y', sensitive: true },
        ],
      },
      inertText,
    );
    expect(lines).toEqual([
      'device a@example.com/laptop: preshared_key differs from the files (a secret: its value is not shown)',
      'device a@example.com/laptop: note differs from the files (a secret: its value is not shown)',
    ]);
    expect(lines.join('\n')).not.toMatch(/SECRET|"x"|"y"/);
  });

  it('escapes values from the server and the files in the webhook text', () => {
    const said = driftText({
      status: 'drift',
      server: 'http://s',
      changes: [
        { action: 'delete', label: 'user <!channel>*x*@example.com', fields: [] },
        { action: 'update', label: 'device a/b', fields: [{ field: 'name', before: '<@U1>', after: '`x`' }] },
      ],
    });
    expect(said).toBe(
      `netform drift on http://s: 2 differences from the desired state: ` +
        `${webhookName('user <!channel>*x*@example.com')} is on the server but in no file (added outside netform, or removed from the files and not yet applied); ` +
        '`device a/b`: `name` is `"&lt;@U1&gt;"` on the server, the files say "`x`"',
    );
    expect(said).not.toContain('<!channel>');
  });
});
