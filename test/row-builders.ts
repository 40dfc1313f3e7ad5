// Counting the row builders better-sqlite3 compiles, per statement: a statement compiles one on
// the first row it returns and another after each re-prepare, so a statement that compiles on
// every call is re-prepared on its bound values (test/sqlite-prepared-once*.test.ts).
import Database from 'better-sqlite3';

type Statement = Database.Statement;

/** The statements running now, innermost last (pushed around every call that can return rows). */
const running: Statement[] = [];

/**
 * Row builders compiled per statement while `run` ran. Per statement object, not per text: a
 * statement prepared anew (the tests' own `env.query`) compiles once, as it should.
 */
export async function compilesPerStatement(run: () => unknown): Promise<Map<Statement, number>> {
  const proto = Object.getPrototypeOf(new Database(':memory:').prepare('SELECT 1')) as Record<string, unknown>;
  const originals = new Map<string, (...args: unknown[]) => unknown>();
  for (const method of ['get', 'all', 'iterate']) {
    const original = proto[method] as (...args: unknown[]) => unknown;
    originals.set(method, original);
    proto[method] = function (this: Statement, ...args: unknown[]) {
      running.push(this);
      try {
        return original.apply(this, args);
      } finally {
        running.pop();
      }
    };
  }
  const compiles = new Map<Statement, number>();
  const original = globalThis.Function;
  globalThis.Function = new Proxy(original, {
    apply(target, self, args) {
      // better-sqlite3 makes its row builders from the global Function (lib/database.js, rowFactory).
      const statement = running.at(-1);
      if (statement) compiles.set(statement, (compiles.get(statement) ?? 0) + 1);
      return Reflect.apply(target, self, args) as unknown;
    },
  });
  try {
    await run();
  } finally {
    globalThis.Function = original;
    for (const [method, fn] of originals) proto[method] = fn;
  }
  return compiles;
}
