// The one version, package.json's, from source and in the executable alike (esbuild inlines the JSON).
import packageJson from '../package.json' with { type: 'json' };

export const VERSION: string = packageJson.version;
