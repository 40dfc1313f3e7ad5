/** A bad setting; its message is one line naming the setting. Import-free so the CLI's error path stays light. */
export class ConfigError extends Error {}
