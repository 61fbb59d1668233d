import {
  renderTemplate,
  templatePlaceholders,
  TemplateSyntaxError,
  unresolvedPlaceholders,
} from '../../src/domain/mail/template-engine';

describe('the mail template language', () => {
  test('when a template uses names and dotted paths, then they are listed once each, in order', () => {
    expect(templatePlaceholders('{{a}} {{ b.c }} {{a}} {{! note }}')).toEqual(['a', 'b.c']);
  });

  test('when a value goes into html, then it is escaped; in text and subject it is kept as it is', () => {
    const values = { name: `<script>"x" & 'y'</script>` };
    expect(renderTemplate('<p>{{name}}</p>', values, true)).toBe(
      '<p>&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;</p>',
    );
    expect(renderTemplate('Hi {{name}}', values, false)).toBe(`Hi <script>"x" & 'y'</script>`);
  });

  test('when a template has anything but placeholders, then it is refused with its position', () => {
    const cases: Array<[string, RegExp, number, number]> = [
      ['ok\n{{#if a}}x{{/if}}', /only placeholders/, 2, 1],
      ['{{{raw}}}', /escaped/, 1, 1],
      ['x {{lookup a b}}', /without helpers/, 1, 3],
      ['{{> partial}}', /only placeholders/, 1, 1],
      ['{{this}}', /not a placeholder name/, 1, 1],
      ['{{../up}}', /not a placeholder name/, 1, 1],
      ['{{@root.x}}', /not a placeholder name/, 1, 1],
      ['Hello\n  {{name', /Parse error/, 2, 5],
      ['{{#each a}}x{{/if}}', /doesn't match/, 1, 4],
    ];
    for (const [source, msg, line, column] of cases) {
      let error: unknown;
      try {
        templatePlaceholders(source);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(TemplateSyntaxError);
      expect((error as TemplateSyntaxError).message).toMatch(msg);
      expect([(error as TemplateSyntaxError).line, (error as TemplateSyntaxError).column]).toEqual([line, column]);
    }
  });

  test('when values are missing, objects, arrays or inherited, then the placeholders are unresolved', () => {
    expect(
      unresolvedPlaceholders(['{{a}} {{b.c}} {{d}} {{e}} {{toString}} {{f.length}}'], {
        a: 1,
        b: {},
        d: { x: 1 },
        e: [1],
        f: 'str',
      }),
    ).toEqual(['b.c', 'd', 'e', 'toString', 'f.length']);
  });
});
