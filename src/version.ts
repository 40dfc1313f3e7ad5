// Replaced at build time by esbuild's `define`; read from package.json in development.
declare const __SVC_VERSION__: string | undefined;

export const VERSION: string = typeof __SVC_VERSION__ === 'string' ? __SVC_VERSION__ : '0.0.0-dev';
