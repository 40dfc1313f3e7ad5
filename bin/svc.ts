#!/usr/bin/env node
// The svc executable's entry. `npm start` and `npm run svc` run it from source;
// `npm run build` bundles it as dist/main.js and packs that into dist/svc. The
// program itself is src/main.ts, which holds early signals before anything loads.
import '../src/main.ts';
