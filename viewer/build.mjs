// Bundles the viewer into dist/ (or the directory given as the first argument): viewer.js
// (src/main.js with three.js and urdf-loader, one classic script so the page also works from
// file://) and index.html. Run from a directory holding node_modules (`npm ci` first).
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const outdir = process.argv[2] || 'dist';
mkdirSync(outdir, { recursive: true });
await build({
    entryPoints: ['src/main.js'],
    bundle: true,
    format: 'iife',
    target: 'es2020',
    minify: true,
    legalComments: 'eof', // keep three.js's licence notice
    footer: { js: '/*! plucker viewer; bundles three.js (MIT, github.com/mrdoob/three.js) and urdf-loader '
        + '(Apache-2.0, github.com/gkjohnson/urdf-loaders) */' },
    outfile: join(outdir, 'viewer.js'),
    logLevel: 'warning',
});
copyFileSync('src/index.html', join(outdir, 'index.html'));
