// finish.mjs finishes the bundle esbuild wrote to DIR. It moves the fonts
// that GraphiQL's style sheet inlines as data: URLs into files of their own,
// so that a browser fetches only the subsets (unicode-range) a page shows
// instead of all of them with the style sheet. It writes LICENSES.txt, the
// licence of every npm package in the bundle, from esbuild's metafile
// (DIR/meta.json, which it removes). Then it names every file by its
// content, so that the server may let browsers keep them for good.
// Usage: node finish.mjs DIR
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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
// The packages whose files esbuild put in the bundle, by their folder.
const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8'));
rmSync(join(dir, 'meta.json'));
const packages = new Set();
for (const input of Object.keys(meta.inputs)) {
  const m = input.match(/^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//);
  if (m) packages.add(m[1]);
}
let licenses = `The script and style sheet in this folder bundle these npm packages (graphiql/package-lock.json
pins their versions). Their fonts are Roboto (Apache License 2.0) and Fira Code (SIL Open Font License 1.1),
as @graphiql/react and graphiql ship them.
`;
for (const pkg of [...packages].sort()) {
  const { name, version, license } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  licenses += `\n${'='.repeat(72)}\n${name} ${version} (${license})\n\n`;
  const file = readdirSync(pkg).find((f) => /^(licen[cs]e|copying)/i.test(f));
  licenses += file ? readFileSync(join(pkg, file), 'utf8').trim() + '\n' : `(the package has no licence file; package.json says ${license})\n`;
}
writeFileSync(join(dir, 'LICENSES.txt'), licenses);

for (const name of readdirSync(dir).filter((n) => /\.(css|js|txt)$/.test(n))) {
  const ext = extname(name);
  const base = name.slice(0, -ext.length);
  renameSync(join(dir, name), join(dir, `${base}-${hash(readFileSync(join(dir, name)))}${ext}`));
}
