/** The database cannot be opened (newer schema, corrupt file, unreadable): one clear line. Import-free. */
export class StoreOpenError extends Error {}
