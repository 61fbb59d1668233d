import {
  checkTemplatePart,
  renderTemplate,
  TEMPLATE_MAX_PLACEHOLDERS,
  TEMPLATE_TEXT_MAX_BYTES,
  TemplateCheckError,
  TemplateOutputTooLarge,
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
    expect(renderTemplate('html', '<p>{{name}}</p>', values)).toBe(
      '<p>&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;</p>',
    );
    expect(renderTemplate('text', 'Hi {{name}}', values)).toBe(`Hi <script>"x" & 'y'</script>`);
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
      ['Hello\n  {{name', /Parse error: this \{\{ has no closing \}\}/, 2, 3],
      ['{{#each a}}x{{/if}}', /only placeholders/, 1, 1],
      ['x\n{{a.b.c.d.e}}', /at most 4 parts/, 2, 1],
      ['{{a "}}" b b b}}', /without helpers/, 1, 1],
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

describe('where a secret value may stand', () => {
  const refused = (kind: 'subject' | 'html' | 'text', source: string) => {
    expect(() => checkTemplatePart(kind, source)).toThrow(TemplateCheckError);
  };
  const accepted = (kind: 'subject' | 'html' | 'text', source: string) => {
    expect(() => checkTemplatePart(kind, source)).not.toThrow();
  };

  test('when html puts the reset link anywhere but the whole href of an <a>, then it is refused', () => {
    for (const source of [
      '<a href="https://x/?{{reset_url}}">go</a>',
      '<img src="{{reset_url}}">',
      '<a href="{{reset_url}}x">go</a>',
      '<a href={{reset_url}}{{first_name}}>go</a>',
      '<a title="{{reset_url}}" href="https://elsewhere.test/">go</a>',
      '<p>{{reset_url}}</p>',
      '<!-- {{reset_url}} -->',
      '<a href="https://elsewhere.test/" href="{{reset_url}}">go</a>',
      '<a href="&#x68;ttps://elsewhere.test/?{{reset_url}}">go</a>',
      `<style>@import url("https://elsewhere.test/?<a href='{{reset_url}}'>");</style>`,
      '<style>a{}</style><a href="{{reset_url}}">go</a>',
      '<a href="{{reset_url}}" ping="https://elsewhere.test/">go</a>',
      '<svg><a href="{{reset_url}}">go</a></svg>',
      '<textarea><a href="{{reset_url}}"></textarea>',
      '<a href="{{reset_token}}">go</a>',
      '<p>{{reset_token}}</p>',
    ])
      refused('html', source);
  });

  test('when html has the reset link as the whole href of an <a>, then it is accepted, whatever the quoting', () => {
    accepted('html', '<p>Hi {{first_name}}</p><p><a href="{{reset_url}}">Choose a new password</a></p>');
    accepted('html', '<A HREF=\'{{reset_url}}\' title="{{first_name}}">x</A> <a href={{reset_url}}>again</a>');
    accepted('html', '<img src="https://cdn.broker.test/logo.png"><a href="{{ reset_url }}">x</a>');
  });

  test('when text does not set the secret apart as a whole word, then it is refused', () => {
    for (const source of [
      'https://elsewhere.test/{{reset_url}}',
      '{{reset_url}}x',
      '{{first_name}}{{reset_url}}',
      'https://elsewhere.test/ {{~reset_url}}',
      'token={{reset_token}}',
    ])
      refused('text', source);
    accepted('text', '{{reset_url}}');
    accepted('text', 'Open:\n\n{{reset_url}}\n\nor type {{reset_token}} {{! note }}');
    accepted('text', 'x {{! note }}{{reset_url}}');
  });

  test('when a subject names a secret, then it is refused', () => {
    refused('subject', 'Reset {{reset_url}}');
    refused('subject', '{{reset_token}}');
    accepted('subject', 'Reset for {{first_name}}');
  });
});

describe('template limits', () => {
  test('when a text is over 64 KiB or has more than 200 placeholders, then it is refused before it is parsed', () => {
    const atMost = 'é'.repeat(TEMPLATE_TEXT_MAX_BYTES / 2);
    expect(() => templatePlaceholders(atMost)).not.toThrow();
    expect(() => templatePlaceholders(`${atMost}x`)).toThrow(/at most 65536 bytes/);
    const many = (n: number) => Array.from({ length: n }, (_, i) => `{{p${i}}}`).join(' ');
    expect(templatePlaceholders(many(TEMPLATE_MAX_PLACEHOLDERS))).toHaveLength(TEMPLATE_MAX_PLACEHOLDERS);
    expect(() => templatePlaceholders(many(TEMPLATE_MAX_PLACEHOLDERS + 1))).toThrow(/at most 200 placeholders/);
    expect(() => templatePlaceholders('{{a}}'.repeat(20_000))).toThrow(TemplateCheckError);
  });

  test('when a placeholder holds more than a short path, then the scan refuses it before Handlebars parses it', () => {
    // Handlebars' parser takes seconds over such texts: 200 paths of 150 parts, or 200 helpers of 150 arguments.
    const started = performance.now();
    const paths = Array.from({ length: 200 }, () => `{{${'a.'.repeat(150)}a}}`).join('');
    expect(() => templatePlaceholders(paths)).toThrow(/at most 4 parts/);
    const args = Array.from({ length: 200 }, () => `{{a ${'b '.repeat(150)}}}`).join('');
    expect(() => templatePlaceholders(args)).toThrow(/without helpers or arguments/);
    expect(() => templatePlaceholders(`{{a "}}" ${'b '.repeat(20_000)}}}`)).toThrow(/without helpers/);
    expect(() => templatePlaceholders('{{this.a}}')).toThrow(/not a placeholder name/);
    expect(performance.now() - started).toBeLessThan(100);
    expect(templatePlaceholders('\\{{a "b" c}} {{~ x.y ~}} {{!-- {{not one}} --}} {{~!-- z --~}}{{w}}')).toEqual(['x.y', 'w']);
  });

  test('when a render would pass its size cap, then it stops before building the text', () => {
    expect(() => renderTemplate('html', '{{a}}{{a}}', { a: '"'.repeat(100) }, { maxChars: 1199 })).toThrow(
      new TemplateOutputTooLarge(1200, 1199),
    );
    expect(renderTemplate('html', '{{a}}{{a}}', { a: '"'.repeat(100) }, { maxChars: 1200 })).toHaveLength(1200);
  });
});
