import { describe, expect, it } from 'vitest';
import { rewriteHtml, trackableUrl } from './rewrite.ts';

/** Tracks every link as T(<url>), so a test can read what the rewriter saw. */
const seen: string[] = [];
const trackLink = (url: string) => {
  seen.push(url);
  return `https://t.test/c/${seen.length}`;
};
const clicks = (html: string) => {
  seen.length = 0;
  return rewriteHtml(html, { trackLink });
};
const PIXEL = 'https://t.test/o/tok';
const pixel = (html: string) => rewriteHtml(html, { pixelUrl: PIXEL });
const IMG = `<img src="${PIXEL}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0" />`;

describe('link rewriting', () => {
  it.each([
    ['double quotes', '<a href="https://a.test/x">x</a>', '<a href="https://t.test/c/1">x</a>'],
    ['single quotes', "<a href='https://a.test/x'>x</a>", '<a href="https://t.test/c/1">x</a>'],
    ['no quotes', '<a href=https://a.test/x>x</a>', '<a href="https://t.test/c/1">x</a>'],
    ['upper case', '<A HREF="http://a.test/x">x</A>', '<A href="https://t.test/c/1">x</A>'],
    [
      'spaces around =',
      '<a class="b" href = "https://a.test/x" id=c>x</a>',
      '<a class="b" href="https://t.test/c/1" id=c>x</a>',
    ],
    [
      'attribute on a new line',
      '<a\n  title="t"\n  href="https://a.test/x"\n>x</a>',
      '<a\n  title="t"\n  href="https://t.test/c/1"\n>x</a>',
    ],
  ])('rewrites an href in %s and keeps the rest of the tag', (_name, html, out) => {
    expect(clicks(html)).toBe(out);
    expect(seen).toHaveLength(1);
  });

  it('passes the URL as a browser reads it: entities decoded, whitespace trimmed, query string kept', () => {
    clicks('<a href=" https://a.test/p?x=1&amp;y=2&copy=3#frag ">x</a><a href="https://a.test/?q=a%20b&lang=en">y</a>');
    expect(seen).toEqual(['https://a.test/p?x=1&y=2&copy=3#frag', 'https://a.test/?q=a%20b&lang=en']);
  });

  it.each([
    ['mailto:', '<a href="mailto:ada@example.com">mail</a>'],
    ['tel:', '<a href="tel:+15551234">call</a>'],
    ['an anchor', '<a href="#section-2">jump</a>'],
    ['a relative link', '<a href="/account">me</a>'],
    ['javascript:', '<a href="javascript:alert(1)">x</a>'],
    ['an empty href', '<a href="">x</a><a href>y</a>'],
    ['no href', '<a name="top">x</a>'],
    ['the opt-out attribute', '<a data-svc-no-track href="https://a.test/unsubscribe">u</a>'],
    ['the opt-out attribute after href', '<a href="https://a.test/u" data-svc-no-track="true">u</a>'],
    ['links that are not <a>', '<link href="https://a.test/s.css" rel="stylesheet"><base href="https://a.test/">'],
    ['a link in a comment', '<!-- <a href="https://a.test/x">x</a> -->'],
    [
      'a link in a script or style',
      '<script>var s = \'<a href="https://a.test/x">\';</script><style>a[href="https://a.test"]{}</style>',
    ],
  ])('leaves %s alone', (_name, html) => {
    expect(clicks(html)).toBe(html);
    expect(seen).toEqual([]);
  });

  it('rewrites only the first of duplicate hrefs, the one browsers follow', () => {
    expect(clicks('<a href="https://a.test/1" href="https://a.test/2">x</a>')).toBe(
      '<a href="https://t.test/c/1" href="https://a.test/2">x</a>',
    );
  });

  it('leaves a link alone when the tracker declines it', () => {
    const html = '<a href="https://a.test/x">x</a>';
    expect(rewriteHtml(html, { trackLink: () => undefined })).toBe(html);
  });

  it('escapes the tracked URL for the attribute', () => {
    expect(rewriteHtml('<a href="https://a.test">x</a>', { trackLink: () => 'https://t.test/?a=1&b="2"' })).toBe(
      '<a href="https://t.test/?a=1&amp;b=&quot;2&quot;">x</a>',
    );
  });

  it('changes nothing else in a whole document', () => {
    const doc = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Hi &amp; welcome</title></head>
<body style="margin:0"><!--[if mso]><table><tr><td><![endif]-->
<p>Hello &nbsp;<b>Ada</b>, see <a href="https://a.test/one" style="color:red">one</a> and <a href='https://a.test/two?x=1&amp;y=2'>two</a>.</p>
<img src="https://a.test/logo.png"><br/>
</body></html>`;
    const out = clicks(doc);
    expect(out).toBe(
      doc
        .replace('href="https://a.test/one"', 'href="https://t.test/c/1"')
        .replace("href='https://a.test/two?x=1&amp;y=2'", 'href="https://t.test/c/2"'),
    );
  });
});

describe('the open pixel', () => {
  it('goes right before </body>', () => {
    expect(pixel('<html><body><p>x</p></body></html>')).toBe(`<html><body><p>x</p>${IMG}</body></html>`);
  });

  it('goes before </BODY> in any case, with elements left open', () => {
    expect(pixel('<body><div>x</BODY >')).toBe(`<body><div>x${IMG}</BODY >`);
  });

  it('ignores a </body> inside a comment', () => {
    expect(pixel('<body><!-- </body> -->x</body>')).toBe(`<body><!-- </body> -->x${IMG}</body>`);
  });

  it('goes before </html> when there is no body, and at the end of a fragment', () => {
    expect(pixel('<html><p>x</p></html>')).toBe(`<html><p>x</p>${IMG}</html>`);
    expect(pixel('<p>x</p>')).toBe(`<p>x</p>${IMG}`);
  });

  it('comes with link rewriting in one pass', () => {
    seen.length = 0;
    expect(rewriteHtml('<body><a href="https://a.test">x</a></body>', { trackLink, pixelUrl: PIXEL })).toBe(
      `<body><a href="https://t.test/c/1">x</a>${IMG}</body>`,
    );
  });
});

describe('no tracking', () => {
  it('returns the HTML untouched, even when it is not well formed', () => {
    const html = '<a href="https://a.test/x"><p>unclosed <b>';
    expect(rewriteHtml(html, {})).toBe(html);
    expect(rewriteHtml('', { trackLink })).toBe('');
  });
});

describe('trackable URLs', () => {
  it.each([
    ['https://a.test/x', 'https://a.test/x'],
    ['HTTP://A.TEST', 'HTTP://A.TEST'],
    ['  https://a.test  ', 'https://a.test'],
    ['https://', undefined],
    ['https:a.test', undefined],
    ['ftp://a.test', undefined],
    [`https://a.test/${'x'.repeat(2100)}`, undefined],
  ])('%s -> %s', (href, want) => {
    expect(trackableUrl(href)).toBe(want);
  });
});
