/**
 * A repository as the core sees it, whichever store runs (architecture rule 4): every
 * operation answers a Promise, so SQLite's synchronous reads and PostgreSQL's round trips
 * stand behind one interface. An operation that answers nothing answers `void`.
 */
export type Port<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Settled<Awaited<R>>> : T[K];
};
type Settled<R> = [R] extends [undefined] ? void : R;
