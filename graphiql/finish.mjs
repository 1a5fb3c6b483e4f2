// finish.mjs finishes the bundle esbuild wrote to DIR. It moves the fonts
// that GraphiQL's style sheet inlines as data: URLs into files of their own,
// so that a browser fetches only the subsets (unicode-range) a page shows
// instead of all of them with the style sheet; then it names every file by
// its content, so that the server may let browsers keep them for good.
// Usage: node finish.mjs DIR
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';

const dir = process.argv[2];
const hash = (data) => createHash('sha256').update(data).digest('hex').slice(0, 16);

mkdirSync(join(dir, 'fonts'));
for (const name of readdirSync(dir).filter((n) => n.endsWith('.css'))) {
  const path = join(dir, name);
  const css = readFileSync(path, 'utf8').replace(
    /url\(data:font\/(woff2?);base64,([A-Za-z0-9+/=]+)\)/g,
    (_, ext, data) => {
      const font = Buffer.from(data, 'base64');
      const file = `${hash(font)}.${ext}`;
      writeFileSync(join(dir, 'fonts', file), font);
      return `url(fonts/${file})`;
    },
  );
  writeFileSync(path, css);
}
for (const name of readdirSync(dir).filter((n) => n.endsWith('.css') || n.endsWith('.js'))) {
  const ext = extname(name);
  const base = name.slice(0, -ext.length);
  renameSync(join(dir, name), join(dir, `${base}-${hash(readFileSync(join(dir, name)))}${ext}`));
}
